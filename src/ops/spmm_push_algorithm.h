// The transposed g-SpMM in push form, as a Halide pipeline over a CSR by destination: every row
// (destination node) v walks its ragged neighbour range and adds its message to the rows of its
// sources,
//
//   out(f, u) = 0
//   out(f, colIdx(rowPtr(v) + k)) += scale(v) * X(f, v) ⊕ Y(f, eid(rowPtr(v) + k))     k < deg(v)
//
// so that out[u] = sum over the edges e = (u -> v) of lhs[v] ⊕ rhs[e]: g-SpMM sum on the reverse
// graph, without building it. scale(v) is 1 / deg(v) for reduce = mean and 1 for sum, which makes
// this the backward of g-SpMM sum / mean with respect to the source features (lhs = the output's
// gradient, indexed by destination). ⊕ is copy_lhs, copy_rhs, mul or div.
//
// The update scatters to data-dependent rows: a parallel schedule must make it atomic (the GPU
// schedule does; the order of the additions, and so the last bits of a sum, then vary between
// runs). Graphs that live for one step (mini-batch blocks) use it instead of a reverse graph that
// a sort would have to build first.
#pragma once

#include <Halide.h>

#include <memory>
#include <vector>

#include "core/dtype.h"
#include "ops/broadcast.h"
#include "ops/op_spec.h"

namespace gsparse {

struct SpmmPushAlgorithm {
    SpmmSpec spec;          ///< ⊕ and the forward reduce (sum or mean)
    FeatureLayout layout;   ///< lhs = per-destination operand, rhs = per-edge operand
    DType dtype = DType::F32;
    bool reads_edge_ids = false;

    Halide::ImageParam row_ptr, col_idx, edge_ids, lhs, rhs;
    Halide::Param<int32_t> max_degree{"max_degree"}, num_edges{"num_edges"}, num_src{"num_src"},
        num_dst{"num_dst"};

    std::vector<Halide::Var> f;  ///< canonical feature dimensions, innermost first
    Halide::Var u{"u"};          ///< the output row (source node)
    Halide::RDom r;              ///< r.x: position in the row, r.y: the row (destination node)
    Halide::Func out{"spmm_push_out"};

    /// Set by schedules: lowering passes of the extension to run on this pipeline.
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;

    /// The pipeline's inputs, in the order of the compiled signature.
    std::vector<Halide::Argument> arguments() const;
    bool uses_lhs() const { return gsparse::uses_lhs(spec.op); }
    bool uses_rhs() const { return gsparse::uses_rhs(spec.op); }
};

/// Whether the push form computes spec: ⊕ in copy_lhs, copy_rhs, mul, div and reduce sum or mean.
bool push_supported(const SpmmSpec &spec);

/// Builds the algorithm (ScheduleError for a spec push_supported rejects). identity_edge_ids: the
/// edge ids are the CSR positions (edge_ids is then not read).
SpmmPushAlgorithm build_spmm_push_algorithm(const SpmmSpec &spec, const FeatureLayout &layout, DType dtype,
                                            bool identity_edge_ids);

}  // namespace gsparse
