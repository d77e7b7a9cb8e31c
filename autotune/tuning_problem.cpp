#include "autotune/tuning_problem.h"

#include <random>

#include "api/gsparse.h"

namespace gsparse::autotune {

namespace {

Tensor random_features(int64_t rows, const std::vector<int64_t> &feat, uint64_t seed, bool positive) {
    std::vector<int64_t> shape{rows};
    shape.insert(shape.end(), feat.begin(), feat.end());
    Tensor t = Tensor::empty(shape, DType::F32);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(positive ? 0.5f : -1.0f, positive ? 2.0f : 1.0f);
    float *p = t.data_as<float>();
    for (int64_t i = 0; i < t.numel(); i++) p[i] = dist(rng);
    return t;
}

int64_t rows_of(const Graph &g, OperandTarget t) {
    return t == OperandTarget::Src ? g.num_src() : t == OperandTarget::Dst ? g.num_dst() : g.num_edges();
}

}  // namespace

std::string TuningProblem::op_name() const {
    return kind == OpKind::Spmm ? "spmm " + spmm.name() : "sddmm " + sddmm.name();
}

void TuningProblem::prepare(uint64_t seed) {
    const BinaryOp op = kind == OpKind::Spmm ? spmm.op : sddmm.op;
    const bool div = op == BinaryOp::Div;
    int64_t lrows = kind == OpKind::Spmm ? graph.num_src() : rows_of(graph, sddmm.lhs);
    int64_t rrows = kind == OpKind::Spmm ? graph.num_edges() : rows_of(graph, sddmm.rhs);
    if (uses_lhs(op)) lhs = random_features(lrows, lhs_feat, seed, false);
    if (uses_rhs(op)) rhs = random_features(rrows, rhs_feat, seed + 1, div);
    if (kind == OpKind::Spmm) {
        auto shape = gspmm_output_shape(graph, spmm, lhs, rhs);
        layout = plan_features(op, uses_lhs(op) ? lhs_feat : rhs_feat, uses_rhs(op) ? rhs_feat : lhs_feat);
        out = Tensor::empty(shape, DType::F32);
        if (has_arg_outputs(spmm.reduce)) {
            arg_u = Tensor::empty(shape, DType::I32);
            arg_e = Tensor::empty(shape, DType::I32);
        }
    } else {
        auto shape = gsddmm_output_shape(graph, sddmm, lhs, rhs);
        layout = plan_features(op, uses_lhs(op) ? lhs_feat : rhs_feat, uses_rhs(op) ? rhs_feat : lhs_feat);
        out = Tensor::empty(shape, DType::F32);
    }
}

}  // namespace gsparse::autotune
