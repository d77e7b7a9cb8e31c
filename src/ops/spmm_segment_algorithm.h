// g-SpMM by nonzeros: a Halide pipeline over the COO of a graph (edge-id order) whose work divides
// into equal runs of edges, whatever the rows' lengths,
//
//   out(f, v) = 0
//   out(f, dstIdx(p)) += scale(v) * X(f, srcIdx(p)) ⊕ Y(f, p)        0 <= p < num_edges
//
// so that out[v] = sum (or mean: scale(v) = 1 / deg(v), from row_ptr) over the in-edges e = (u -> v)
// of lhs[u] ⊕ rhs[e], for any ⊕. Rows longer than a run are split across runs and rows shorter
// than a run share one, as merge-path and segment-reduction SpMM (GeoT) divide the nonzeros; the
// partial sums of a run's rows meet in the output through atomic adds (schedules/spmm_segments.h,
// whose lowering pass keeps each run's partial sum of a row in a register and adds it to memory
// once, when the row changes). The order of the additions, and so the last bits of a sum, then
// vary between runs on the GPU. Runs are contiguous in edge-id order: graphs whose edge ids follow
// their CSR (the sampler's blocks, graphs loaded from CSR files) give runs of whole row segments;
// other orders stay correct with more atomic adds.
//
// The warp-lane form (lane_steps = S > 0) takes the edges in chunks of 32 x S, each a warp's: the
// reduction domain is (lane l < 32, step j < S, chunk c), edge p = 32 (S c + j) + l, so that a warp
// reads 32 consecutive edges a step (coalesced) and its lanes' partial sums meet through a
// segmented reduction over the lanes (halide_ext/segmented_lane_atomics.h). Edges past the last
// (the last chunk's) read the last edge and add 0, so that no lane skips a step: the domain has no
// condition that depends on the lane.
#pragma once

#include <Halide.h>

#include <memory>
#include <vector>

#include "core/dtype.h"
#include "ops/broadcast.h"
#include "ops/op_spec.h"

namespace gsparse {

struct SpmmSegmentAlgorithm {
    SpmmSpec spec;          ///< ⊕ (any binary op) and reduce (sum or mean)
    FeatureLayout layout;   ///< lhs = per-source operand, rhs = per-edge operand
    DType dtype = DType::F32;
    int lane_steps = 0;     ///< 0: runs of edges a thread; S > 0: the warp-lane form, S steps of 32 edges

    // Inputs: the COO in edge-id order; row_ptr only for mean (the in-degree of each row).
    Halide::ImageParam src_idx, dst_idx, row_ptr, lhs, rhs;
    Halide::Param<int32_t> num_edges{"num_edges"}, num_src{"num_src"}, num_dst{"num_dst"};

    std::vector<Halide::Var> f;  ///< canonical feature dimensions, innermost first
    Halide::Var v{"v"};          ///< the output row (destination node)
    Halide::RDom p;              ///< the edge (its position in the COO); (lane, step, chunk) in the lane form
    Halide::Func out{"spmm_segments_out"};

    /// Set by schedules: lowering passes of the extension to run on this pipeline, in order.
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    /// The pipeline's inputs, in the order of the compiled signature.
    std::vector<Halide::Argument> arguments() const;
    bool uses_lhs() const { return gsparse::uses_lhs(spec.op); }
    bool uses_rhs() const { return gsparse::uses_rhs(spec.op); }
    bool reads_row_ptr() const { return spec.reduce == ReduceOp::Mean; }
};

/// Whether the nonzero form computes spec: any binary op with reduce sum or mean.
bool segments_supported(const SpmmSpec &spec);

/// The lanes of a chunk of the warp-lane form (a warp).
inline constexpr int kSegmentChunkLanes = 32;

/// Builds the algorithm (ScheduleError for a spec segments_supported rejects); lane_steps > 0 gives
/// the warp-lane form of that many steps a chunk.
SpmmSegmentAlgorithm build_spmm_segment_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype,
                                                  int lane_steps = 0);

}  // namespace gsparse
