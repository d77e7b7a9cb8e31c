#include "ops/spmm_algorithm.h"

#include "halide_ext/ragged_bounds.h"
#include "ops/binary.h"
#include "ops/halide_types.h"
#include "ops/operand_access.h"

namespace gsparse {

using namespace Halide;

std::vector<Argument> SpmmAlgorithm::arguments() const {
    std::vector<Argument> args = {row_ptr, col_idx};
    if (reads_edge_ids) args.push_back(edge_ids);
    if (uses_lhs()) args.push_back(lhs);
    if (uses_rhs()) args.push_back(rhs);
    args.push_back(max_degree);
    args.push_back(num_edges);
    args.push_back(num_src);
    if (rows_bound) args.push_back(row_order);
    if (relabeled) args.push_back(src_order);
    if (has_row_tails(*this)) {
        args.push_back(tail_start);
        args.push_back(tail_end);
        args.push_back(tail_row);
        args.push_back(num_tails);
    }
    if (rows_split(*this)) {
        args.push_back(row_segs);
        args.push_back(num_segs);
        args.push_back(max_segments);
        if (src_tile > 0) {
            args.push_back(seg_ids);
            if (spec.reduce == ReduceOp::Mean) args.push_back(row_degree_ptr);
        }
    }
    return args;
}

SpmmAlgorithm build_spmm_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype,
                                   bool identity_edge_ids) {
    check_spmm_spec(spec);
    check_feature_dtype(dtype);
    SpmmAlgorithm a;
    a.spec = spec;
    a.layout = layout;
    a.dtype = dtype;
    a.identity_edge_ids = identity_edge_ids;
    const int rank = layout.rank();
    const Type t = halide_type(dtype);
    a.reads_edge_ids = !identity_edge_ids && gsparse::reads_edge_ids(spec);

    a.row_ptr = ImageParam(Int(32), 1, "row_ptr");
    a.col_idx = ImageParam(Int(32), 1, "col_idx");
    a.edge_ids = ImageParam(Int(32), 1, "edge_ids");
    a.lhs = ImageParam(t, rank + 1, "lhs");
    a.rhs = ImageParam(t, rank + 1, "rhs");
    for (int i = 0; i < rank; i++) a.f.emplace_back("f" + std::to_string(i));

    // The ragged neighbour range of row v.
    Expr start = a.row_ptr(a.v);
    Expr degree = a.row_ptr(a.v + 1) - start;
    a.k = RDom(0, a.max_degree, "k");
    a.k.where(a.k < degree);
    // Positions past the row's end are clamped into the array by infer_ragged_bounds (below): a
    // staged tile of a short row reads valid (unused) entries instead of running off the end of col_idx.
    Expr pos_kv = start + a.kv;
    a.nbr(a.kv, a.v) = a.col_idx(pos_kv);
    a.eid(a.kv, a.v) = a.reads_edge_ids ? a.edge_ids(pos_kv) : pos_kv;
    Expr u = a.nbr(a.k, a.v);
    Expr e = a.eid(a.k, a.v);

    Expr x = a.uses_lhs() ? Expr(a.lhs(operand_args(a.f, layout.lhs_varies, u))) : Expr();
    Expr y = a.uses_rhs() ? Expr(a.rhs(operand_args(a.f, layout.rhs_varies, e))) : Expr();
    Expr msg = apply_binary(spec.op, x, y);

    std::vector<Expr> fv(a.f.begin(), a.f.end());
    fv.push_back(a.v);
    Expr zero = Halide::Internal::make_zero(t);

    switch (spec.reduce) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: {
        a.acc(fv) = zero;
        a.acc(fv) += msg;
        if (spec.reduce == ReduceOp::Sum) {
            a.out(fv) = a.acc(fv);
        } else {
            a.out(fv) = select(degree > 0, a.acc(fv) / cast(t, max(degree, 1)), zero);
        }
        break;
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
        a.acc(fv) = Tuple(zero, Expr(-1), Expr(-1));
        Expr best = a.acc(fv)[0], best_u = a.acc(fv)[1], best_e = a.acc(fv)[2];
        // The first message of a row always wins; later ones only when strictly better, so ties keep
        // the earliest neighbour in row order.
        Expr better = best_u < 0 || (spec.reduce == ReduceOp::Max ? msg > best : msg < best);
        a.acc(fv) = Tuple(select(better, msg, best), select(better, u, best_u), select(better, e, best_e));
        a.out(fv) = Tuple(a.acc(fv)[0], a.acc(fv)[1], a.acc(fv)[2]);
        break;
    }
    }

    // The sparse structure, guaranteed by graph validation; the extension bounds the ragged CSR
    // accesses and the gathers from it.
    ext::SparseLayout sparse;
    sparse.csr(a.row_ptr, a.num_edges)
        .nnz_index_array(a.col_idx, a.num_src)
        .nnz_index_array(a.edge_ids, a.num_edges);
    ext::infer_ragged_bounds({a.out, a.acc, a.nbr, a.eid}, sparse);
    return a;
}

}  // namespace gsparse
