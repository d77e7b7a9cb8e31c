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

    // Inputs: the COO in edge-id order; row_ptr only for mean (the in-degree of each row).
    Halide::ImageParam src_idx, dst_idx, row_ptr, lhs, rhs;
    Halide::Param<int32_t> num_edges{"num_edges"}, num_src{"num_src"}, num_dst{"num_dst"};

    std::vector<Halide::Var> f;  ///< canonical feature dimensions, innermost first
    Halide::Var v{"v"};          ///< the output row (destination node)
    Halide::RDom p;              ///< the edge (its position in the COO)
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

/// Builds the algorithm (ScheduleError for a spec segments_supported rejects).
SpmmSegmentAlgorithm build_spmm_segment_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype);

}  // namespace gsparse
