#include "ops/spmm_push_algorithm.h"

#include "core/error.h"
#include "halide_ext/ragged_bounds.h"
#include "ops/binary.h"
#include "ops/halide_types.h"
#include "ops/operand_access.h"

namespace gsparse {

using namespace Halide;

bool push_supported(const SpmmSpec &spec) {
    const bool op = spec.op == BinaryOp::CopyLhs || spec.op == BinaryOp::CopyRhs || spec.op == BinaryOp::Mul ||
                    spec.op == BinaryOp::Div;
    return op && (spec.reduce == ReduceOp::Sum || spec.reduce == ReduceOp::Mean);
}

std::vector<Argument> SpmmPushAlgorithm::arguments() const {
    std::vector<Argument> args = {row_ptr, col_idx};
    if (reads_edge_ids) args.push_back(edge_ids);
    if (uses_lhs()) args.push_back(lhs);
    if (uses_rhs()) args.push_back(rhs);
    args.push_back(max_degree);
    args.push_back(num_edges);
    args.push_back(num_src);
    args.push_back(num_dst);
    return args;
}

SpmmPushAlgorithm build_spmm_push_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype,
                                            bool identity_edge_ids) {
    if (!push_supported(spec))
        fail<ScheduleError>("the transposed (push) g-SpMM computes copy_lhs, copy_rhs, mul and div with sum or mean, "
                            "not ", spec.name());
    check_feature_dtype(dtype);
    SpmmPushAlgorithm a;
    a.spec = spec;
    a.layout = layout;
    a.dtype = dtype;
    a.reads_edge_ids = !identity_edge_ids && a.uses_rhs();
    const int rank = layout.rank();
    const Type t = halide_type(dtype);

    a.row_ptr = ImageParam(Int(32), 1, "row_ptr");
    a.col_idx = ImageParam(Int(32), 1, "col_idx");
    a.edge_ids = ImageParam(Int(32), 1, "edge_ids");
    a.lhs = ImageParam(t, rank + 1, "lhs");
    a.rhs = ImageParam(t, rank + 1, "rhs");
    for (int i = 0; i < rank; i++) a.f.emplace_back("f" + std::to_string(i));

    // Rows v of the CSR and their ragged neighbour ranges.
    a.r = RDom(0, a.max_degree, 0, a.num_dst, "r");
    Expr k = a.r.x, v = a.r.y;
    Expr start = a.row_ptr(v);
    Expr degree = a.row_ptr(v + 1) - start;
    a.r.where(k < degree);
    Expr pos = start + k;
    Expr src = a.col_idx(pos);
    Expr e = a.reads_edge_ids ? Expr(a.edge_ids(pos)) : pos;

    Expr x = a.uses_lhs() ? Expr(a.lhs(operand_args(a.f, layout.lhs_varies, v))) : Expr();
    Expr y = a.uses_rhs() ? Expr(a.rhs(operand_args(a.f, layout.rhs_varies, e))) : Expr();
    if (spec.reduce == ReduceOp::Mean) {
        // The row is not empty inside the predicate.
        Expr inv = cast(t, 1) / cast(t, degree);
        if (a.uses_lhs()) x = x * inv;
        else y = y * inv;
    }
    Expr msg = apply_binary(spec.op, x, y);

    std::vector<Expr> pure(a.f.begin(), a.f.end());
    pure.push_back(a.u);
    std::vector<Expr> scatter(a.f.begin(), a.f.end());
    scatter.push_back(src);
    a.out(pure) = Halide::Internal::make_zero(t);
    a.out(scatter) += msg;

    // The sparse structure (guaranteed by graph validation): the extension bounds the ragged CSR
    // accesses and the scattered rows.
    ext::SparseLayout sparse;
    sparse.csr(a.row_ptr, a.num_edges)
        .nnz_index_array(a.col_idx, a.num_src)
        .nnz_index_array(a.edge_ids, a.num_edges);
    ext::infer_ragged_bounds({a.out}, sparse);
    return a;
}

}  // namespace gsparse
