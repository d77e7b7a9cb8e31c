#include "ops/sddmm_algorithm.h"

#include "halide_ext/ragged_bounds.h"
#include "ops/dense_operands.h"
#include "ops/binary.h"
#include "ops/halide_types.h"

namespace gsparse {

using namespace Halide;

static bool reads_target(const SddmmAlgorithm &a, OperandTarget t) {
    return (a.uses_lhs() && a.spec.lhs == t) || (a.uses_rhs() && a.spec.rhs == t);
}

bool SddmmAlgorithm::reads_src() const { return reads_target(*this, OperandTarget::Src); }
bool SddmmAlgorithm::reads_dst() const { return reads_target(*this, OperandTarget::Dst); }

std::vector<Argument> SddmmAlgorithm::arguments() const {
    std::vector<Argument> args;
    if (reads_src()) args.push_back(src_idx);
    if (reads_dst()) args.push_back(dst_idx);
    if (edges_grouped) args.push_back(edge_of);
    if (uses_lhs()) args.push_back(lhs);
    if (uses_rhs()) args.push_back(rhs);
    args.push_back(num_edges);
    args.push_back(num_src);
    args.push_back(num_dst);
    return args;
}

SddmmAlgorithm build_sddmm_algorithm(const SddmmSpec &spec, const FeatureLayout &layout, DType dtype) {
    check_feature_dtype(dtype);
    SddmmAlgorithm a;
    a.spec = spec;
    a.layout = layout;
    a.dtype = dtype;
    const int rank = layout.rank();
    const bool is_dot = spec.op == BinaryOp::Dot;
    const Type t = halide_type(dtype);
    const int operand_dims = rank + (is_dot ? 1 : 0) + 1;

    a.src_idx = ImageParam(Int(32), 1, "src_idx");
    a.dst_idx = ImageParam(Int(32), 1, "dst_idx");
    a.lhs = ImageParam(t, operand_dims, "lhs");
    a.rhs = ImageParam(t, operand_dims, "rhs");
    for (int i = 0; i < rank; i++) a.f.emplace_back("f" + std::to_string(i));
    // Operands are dense and row-major, starting at 0: constant strides let the compiler prove the
    // alignment of vector loads along the features. Rows start 16-byte aligned when the feature
    // length allows it (the runtime checks device pointers).
    declare_dense_operand(a.lhs, layout.lhs_extents());
    declare_dense_operand(a.rhs, layout.rhs_extents());

    // Edge-indexed operands are read at min(e, num_edges - 1): schedules may compute an edge's
    // partial results for the padding edges of the last block (their stores are guarded).
    Expr edge = min(a.e, a.num_edges - 1);
    auto row_of = [&](OperandTarget target) -> Expr {
        switch (target) {
        case OperandTarget::Src: return a.src_idx(a.e);
        case OperandTarget::Dst: return a.dst_idx(a.e);
        case OperandTarget::Edge: return edge;
        }
        return edge;
    };
    auto operand = [&](ImageParam &p, const std::vector<bool> &varies, OperandTarget target, const Expr &red) {
        std::vector<Expr> args;
        if (red.defined()) args.push_back(red);
        for (int i = 0; i < rank; i++) args.push_back(varies[i] ? Expr(a.f[i]) : Expr(0));
        args.push_back(row_of(target));
        return Expr(p(args));
    };

    std::vector<Expr> fe(a.f.begin(), a.f.end());
    fe.push_back(a.e);
    if (is_dot) {
        a.r = RDom(0, static_cast<int>(layout.reduce_len), "r");
        Expr l = operand(a.lhs, layout.lhs_varies, spec.lhs, a.r);
        Expr rr = operand(a.rhs, layout.rhs_varies, spec.rhs, a.r);
        a.dot(fe) = Halide::Internal::make_zero(t);
        a.dot(fe) += l * rr;
        a.out(fe) = a.dot(fe);
    } else {
        Expr l = a.uses_lhs() ? operand(a.lhs, layout.lhs_varies, spec.lhs, Expr()) : Expr();
        Expr rr = a.uses_rhs() ? operand(a.rhs, layout.rhs_varies, spec.rhs, Expr()) : Expr();
        a.out(fe) = apply_binary(spec.op, l, rr);
    }

    // The COO arrays' node ids lie in [0, num_src) / [0, num_dst) (graph validation); the extension
    // bounds the gathers from them.
    ext::SparseLayout sparse;
    sparse.coo_index_array(a.src_idx, a.num_edges, a.num_src).coo_index_array(a.dst_idx, a.num_edges, a.num_dst);
    ext::infer_ragged_bounds({a.out, a.dot}, sparse);
    return a;
}

}  // namespace gsparse
