#include "ops/spmm_segment_algorithm.h"

#include "core/error.h"
#include "halide_ext/ragged_bounds.h"
#include "ops/binary.h"
#include "ops/halide_types.h"
#include "ops/operand_access.h"

namespace gsparse {

using namespace Halide;

bool segments_supported(const SpmmSpec &spec) {
    return spec.reduce == ReduceOp::Sum || spec.reduce == ReduceOp::Mean;
}

std::vector<Argument> SpmmSegmentAlgorithm::arguments() const {
    std::vector<Argument> args = {src_idx, dst_idx};
    if (reads_row_ptr()) args.push_back(row_ptr);
    if (uses_lhs()) args.push_back(lhs);
    if (uses_rhs()) args.push_back(rhs);
    args.push_back(num_edges);
    args.push_back(num_src);
    args.push_back(num_dst);
    return args;
}

SpmmSegmentAlgorithm build_spmm_segment_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype,
                                                  int lane_steps) {
    if (!segments_supported(spec))
        fail<ScheduleError>("g-SpMM by nonzeros reduces by sum or mean (atomic adds), not ", spec.name());
    check_feature_dtype(dtype);
    SpmmSegmentAlgorithm a;
    a.spec = spec;
    a.layout = layout;
    a.dtype = dtype;
    if (lane_steps < 0) fail<ScheduleError>("g-SpMM by nonzeros: lane steps must be >= 0, got ", lane_steps);
    a.lane_steps = lane_steps;
    const int rank = layout.rank();
    const Type t = halide_type(dtype);

    a.src_idx = ImageParam(Int(32), 1, "src_idx");
    a.dst_idx = ImageParam(Int(32), 1, "dst_idx");
    a.row_ptr = ImageParam(Int(32), 1, "row_ptr");
    a.lhs = ImageParam(t, rank + 1, "lhs");
    a.rhs = ImageParam(t, rank + 1, "rhs");
    for (int i = 0; i < rank; i++) a.f.emplace_back("f" + std::to_string(i));

    // At least one iteration (a GPU launch needs a block), none past the last edge.
    Expr e, valid;
    if (lane_steps == 0) {
        a.p = RDom(0, max(a.num_edges, 1), "p");
        a.p.where(a.p.x < a.num_edges);
        e = a.p.x;
    } else {
        // Whole chunks; the positions past the last edge read it and add 0 (callers run graphs
        // without edges another way: nothing to read).
        const int chunk = kSegmentChunkLanes * lane_steps;
        Expr edges = max(a.num_edges, 1);
        a.p = RDom(0, kSegmentChunkLanes, 0, lane_steps, 0, (edges + (chunk - 1)) / chunk, "p");
        Expr position = a.p.x + kSegmentChunkLanes * (a.p.y + lane_steps * a.p.z);
        valid = position < a.num_edges;
        e = min(position, edges - 1);
    }
    Expr u = a.src_idx(e), v = a.dst_idx(e);
    Expr x = a.uses_lhs() ? Expr(a.lhs(operand_args(a.f, layout.lhs_varies, u))) : Expr();
    Expr y = a.uses_rhs() ? Expr(a.rhs(operand_args(a.f, layout.rhs_varies, e))) : Expr();
    Expr msg = apply_binary(spec.op, x, y);
    if (a.reads_row_ptr()) {
        // Every row that receives an edge has at least that edge.
        msg = msg / cast(t, a.row_ptr(v + 1) - a.row_ptr(v));
    }
    if (valid.defined()) msg = select(valid, msg, Halide::Internal::make_zero(t));

    std::vector<Expr> pure(a.f.begin(), a.f.end());
    pure.push_back(a.v);
    std::vector<Expr> scatter(a.f.begin(), a.f.end());
    scatter.push_back(v);
    a.out(pure) = Halide::Internal::make_zero(t);
    a.out(scatter) += msg;

    // The COO's node ids lie in [0, num_src) / [0, num_dst) (graph validation): the extension bounds
    // the gathers from them, the scatter into the output rows and the degree lookups.
    ext::SparseLayout sparse;
    sparse.coo_index_array(a.src_idx, a.num_edges, a.num_src).coo_index_array(a.dst_idx, a.num_edges, a.num_dst);
    ext::infer_ragged_bounds({a.out}, sparse);
    return a;
}

}  // namespace gsparse
