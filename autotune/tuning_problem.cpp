#include "autotune/tuning_problem.h"

#include <random>

#include "api/gsparse.h"
#include "api/tuning_key.h"
#include "autotune/device_mirror.h"
#include "core/error.h"

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

void TuningProblem::plan_layout() {
    const BinaryOp op = kind == OpKind::Spmm ? spmm.op : sddmm.op;
    layout = plan_op_features(op, lhs_feat, rhs_feat);
}

void TuningProblem::prepare(uint64_t seed) {
    const BinaryOp op = kind == OpKind::Spmm ? spmm.op : sddmm.op;
    const bool div = op == BinaryOp::Div;
    int64_t lrows = kind == OpKind::Spmm ? graph.num_src() : rows_of(graph, sddmm.lhs);
    int64_t rrows = kind == OpKind::Spmm ? graph.num_edges() : rows_of(graph, sddmm.rhs);
    if (uses_lhs(op)) lhs = random_features(lrows, lhs_feat, seed, false);
    if (uses_rhs(op)) rhs = random_features(rrows, rhs_feat, seed + 1, div);
    plan_layout();
    if (kind == OpKind::Spmm) {
        auto shape = gspmm_output_shape(graph, spmm, lhs, rhs);
        out = Tensor::empty(shape, DType::F32);
        if (has_arg_outputs(spmm.reduce)) {
            arg_u = Tensor::empty(shape, DType::I32);
            arg_e = Tensor::empty(shape, DType::I32);
        }
    } else {
        auto shape = gsddmm_output_shape(graph, sddmm, lhs, rhs);
        out = Tensor::empty(shape, DType::F32);
    }
    if (device == Device::CUDA) move_to_device();
}

TuningProblem TuningProblem::load_problem() const {
    // Every row i reads i, i + 1 and 5i + 3 (mod 64), but rows 9, 25, 41 and 57 are empty and row 0
    // reads every node: the kernels' row, lane and segment paths all run.
    constexpr index_t n = 64;
    std::vector<index_t> row_ptr{0}, col_idx;
    for (index_t i = 0; i < n; i++) {
        if (i == 0)
            for (index_t j = 0; j < n; j++) col_idx.push_back(j);
        else if (i % 16 != 9)
            for (index_t j : {i, (i + 1) % n, (5 * i + 3) % n}) col_idx.push_back(j);
        row_ptr.push_back(static_cast<index_t>(col_idx.size()));
    }
    // Kernels that read edge ids are compiled for one kind of them (CSR positions or a map).
    std::vector<index_t> reversed(col_idx.size());
    for (size_t e = 0; e < reversed.size(); e++) reversed[e] = static_cast<index_t>(reversed.size() - 1 - e);
    const bool identity = graph.csr().identity_edge_ids();
    TuningProblem q;
    q.kind = kind;
    q.spmm = spmm;
    q.sddmm = sddmm;
    q.lhs_feat = lhs_feat;
    q.rhs_feat = rhs_feat;
    q.device = device;
    q.graph = Graph::from_csr_arrays(n, n, row_ptr.data(), col_idx.data(), identity ? nullptr : reversed.data(),
                                     static_cast<int64_t>(col_idx.size()));
    q.graph_name = "load graph";
    q.prepare();
    return q;
}

void TuningProblem::move_to_device() {
    auto mirror = std::make_shared<DeviceMirror>();
    for (Tensor *t : {&lhs, &rhs, &out, &arg_u, &arg_e})
        if (t->defined() && t->dim() != 0) *t = mirror->upload(*t);
    device_memory = mirror;
    sync = [mirror] { mirror->sync(); };
}

std::string TuningProblem::device_label() const { return gsparse::device_label(device); }

}  // namespace gsparse::autotune
