// split_rows: the row-split form of the g-SpMM algorithm (segments of rows, or with source tiles
// runs of a row within one tile of source ids; graph/segments.h).
//
//   acc(f, s)      the algorithm's reduction, now over segment s = [row_ptr(s), row_ptr(s+1))
//   partial(f, s)  = acc(f, s)
//   comb(f, v)     = Φ_{j < row_segs(v+1) - row_segs(v)} partial(f, row_segs(v) + j)
//                    (with source tiles: partial(f, seg_ids(row_segs(v) + j)))
//   out(f, v)      = finalize(comb(f, v))   (mean divides by the row's length)
#include <algorithm>

#include "core/error.h"
#include "ops/halide_types.h"
#include "ops/spmm_algorithm.h"

namespace gsparse {

using namespace Halide;

bool rows_split(const SpmmAlgorithm &a) { return a.segment_len > 0 || a.src_tile > 0; }

void split_rows(SpmmAlgorithm &a, int segment_len, int64_t src_tile) {
    if (segment_len <= 0 && src_tile <= 0) return;
    if (src_tile > 0 && has_arg_outputs(a.spec.reduce))
        fail<ScheduleError>("kSrcTile: source-tile segments combine in tile order, not row order, so ",
                            reduce_op_name(a.spec.reduce), " ties could pick another neighbour; use sum or mean");
    if (src_tile > 0 && a.identity_edge_ids && gsparse::reads_edge_ids(a.spec))
        fail<ScheduleError>("kSrcTile: the algorithm must read edge ids (build it with identity_edge_ids = false)");
    a.segment_len = std::max(segment_len, 0);
    a.src_tile = std::max<int64_t>(src_tile, 0);
    const Type t = halide_type(a.dtype);
    a.row_segs = ImageParam(Int(32), 1, "row_segs");
    if (a.src_tile > 0) {
        a.seg_ids = ImageParam(Int(32), 1, "seg_ids");
        a.row_degree_ptr = ImageParam(Int(32), 1, "row_degree_ptr");
    }

    std::vector<Expr> fv(a.f.begin(), a.f.end());
    fv.push_back(a.v);
    a.partial(fv) = a.acc(fv);

    Expr first = a.row_segs(a.v), count = a.row_segs(a.v + 1) - first;
    a.j = RDom(0, a.max_segments, "j");
    a.j.where(a.j < count);
    // Segment ids lie in [0, num_segs): row_segs and seg_ids are valid by construction
    // (graph/segments).
    Expr seg = unsafe_promise_clamped(first + a.j, 0, a.num_segs - 1);
    if (a.src_tile > 0) seg = unsafe_promise_clamped(a.seg_ids(seg), 0, a.num_segs - 1);
    std::vector<Expr> fs(a.f.begin(), a.f.end());
    fs.push_back(seg);
    Expr zero = Internal::make_zero(t);
    Func out(a.out.name() + "_split");
    switch (a.spec.reduce) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: {
        a.comb(fv) = zero;
        a.comb(fv) += a.partial(fs);
        if (a.spec.reduce == ReduceOp::Sum) {
            out(fv) = a.comb(fv);
        } else {
            // Segment offsets of row v's first segment and of the next row's (num_segs at the end);
            // source-tile segments are not consecutive, so the CSR's row_ptr gives the degree.
            Expr begin = unsafe_promise_clamped(first, 0, a.num_segs);
            Expr end = unsafe_promise_clamped(a.row_segs(a.v + 1), 0, a.num_segs);
            Expr degree = a.src_tile > 0 ? a.row_degree_ptr(a.v + 1) - a.row_degree_ptr(a.v)
                                         : a.row_ptr(end) - a.row_ptr(begin);
            out(fv) = select(degree > 0, a.comb(fv) / cast(t, max(degree, 1)), zero);
        }
        break;
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
        a.comb(fv) = Tuple(zero, Expr(-1), Expr(-1));
        Expr best = a.comb(fv)[0], best_u = a.comb(fv)[1], best_e = a.comb(fv)[2];
        Expr cand = a.partial(fs)[0], cand_u = a.partial(fs)[1], cand_e = a.partial(fs)[2];
        Expr better = best_u < 0 || (a.spec.reduce == ReduceOp::Max ? cand > best : cand < best);
        a.comb(fv) = Tuple(select(better, cand, best), select(better, cand_u, best_u), select(better, cand_e, best_e));
        out(fv) = Tuple(a.comb(fv)[0], a.comb(fv)[1], a.comb(fv)[2]);
        break;
    }
    }
    a.out = out;
}

}  // namespace gsparse
