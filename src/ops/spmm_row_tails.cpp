// split_row_tails: the row-tail form of the g-SpMM algorithm (SpmmAlgorithm::tail_len).
//
//   acc(f, v)       the algorithm's reduction, over row v's first tail_len nonzeros (the run binds
//                   max_degree = tail_len; the RDom's extent caps the row loop)
//   out(f, v)       = finalize(acc(f, v))                            (unchanged: the row stage)
//   tail_acc(f, t)  = Σ over positions [tail_start(t), tail_end(t)) of the message (at most
//                   tail_len of them)
//   out(f, tail_row(t)) += tail_acc(f, t) / scale(tail_row(t))       (atomic update over t)
//
// scale is 1 for sum and the row's degree for mean, so a mean row is the sum of its parts each
// divided by the whole row's degree.
#include "core/error.h"
#include "halide_ext/ragged_bounds.h"
#include "ops/binary.h"
#include "ops/halide_types.h"
#include "ops/operand_access.h"
#include "ops/spmm_algorithm.h"

namespace gsparse {

using namespace Halide;

bool has_row_tails(const SpmmAlgorithm &a) { return a.tail_len > 0; }

void split_row_tails(SpmmAlgorithm &a, int tail_len) {
    if (tail_len < 1) fail<ScheduleError>("row tails: tail_len must be at least 1, got ", tail_len);
    if (a.spec.reduce != ReduceOp::Sum && a.spec.reduce != ReduceOp::Mean)
        fail<ScheduleError>("row tails add a row's parts with atomic adds in any order: sum and mean only, not ",
                            reduce_op_name(a.spec.reduce));
    if (rows_split(a) || a.relabeled || a.rows_bound)
        fail<ScheduleError>("row tails take whole rows in row order: no segments, source tiles or row orders");
    a.tail_len = tail_len;
    const Type t = halide_type(a.dtype);
    a.tail_start = ImageParam(Int(32), 1, "tail_start");
    a.tail_end = ImageParam(Int(32), 1, "tail_end");
    a.tail_row = ImageParam(Int(32), 1, "tail_row");
    Var r("r");

    // tail_row holds row ids of the graph by construction (graph/segments.h: row_tails), and tail
    // ids lie in [0, num_tails). The promise names the output's rows, so that the update's stores
    // do not widen the rows the row stage covers.
    const int rank = a.layout.rank();
    Expr out_rows = a.out.output_buffers()[0].dim(rank).extent();
    auto row_of = [&](const Expr &tail) { return unsafe_promise_clamped(a.tail_row(tail), 0, out_rows - 1); };
    // Tail r's positions [tail_start(r), tail_end(r)), at most tail_len of them.
    Expr start = a.tail_start(r);
    a.tail_k = RDom(0, tail_len, "tk");
    a.tail_k.where(a.tail_k < a.tail_end(r) - start);
    Expr pos = start + a.tail_k;
    Expr u = a.col_idx(pos);
    Expr e = a.reads_edge_ids ? Expr(a.edge_ids(pos)) : pos;
    Expr x = a.uses_lhs() ? Expr(a.lhs(operand_args(a.f, a.layout.lhs_varies, u))) : Expr();
    Expr y = a.uses_rhs() ? Expr(a.rhs(operand_args(a.f, a.layout.rhs_varies, e))) : Expr();
    std::vector<Expr> fr(a.f.begin(), a.f.end());
    fr.push_back(r);
    a.tail_acc(fr) = Internal::make_zero(t);
    a.tail_acc(fr) += apply_binary(a.spec.op, x, y);

    // A tail's start is a position of the edge arrays, like a CSR row's: the same ragged bounds
    // (positions past the row's end are clamped into the arrays and never used).
    ext::SparseLayout tails;
    tails.csr(a.tail_start, a.num_edges)
        .nnz_index_array(a.col_idx, a.num_src)
        .nnz_index_array(a.edge_ids, a.num_edges);
    ext::infer_ragged_bounds({a.tail_acc}, tails);

    a.tail_r = RDom(0, a.num_tails, "tr");
    Expr tail = a.tail_r;
    Expr row = row_of(tail);
    std::vector<Expr> lhs(a.f.begin(), a.f.end()), at(a.f.begin(), a.f.end());
    lhs.push_back(row);
    at.push_back(tail);
    Expr part = a.tail_acc(at);
    if (a.spec.reduce == ReduceOp::Mean) {
        Expr degree = a.row_ptr(row + 1) - a.row_ptr(row);
        part = part / cast(t, max(degree, 1));
    }
    a.out(lhs) += part;
}

}  // namespace gsparse
