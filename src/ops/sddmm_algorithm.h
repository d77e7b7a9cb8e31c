// The g-SDDMM algorithm as a Halide pipeline, written as in the paper's Fig. 7: an edge-indexed
// definition over the COO arrays (position e holds edge id e, so results are in edge-id order).
//
//   out(f, e) = L(f, t_l(e)) ⊕ R(f, t_r(e))                   add, sub, mul, div, copy_lhs, copy_rhs
//   dot(f, e) = 0;  dot(f, e) += L(r, f, t_l(e)) * R(r, f, t_r(e))   r < reduce_len
//   out(f, e) = dot(f, e)
//
// with t(e) = src(e) for target u, dst(e) for v and e itself for e. Schedules are applied separately.
#pragma once

#include <Halide.h>

#include <memory>
#include <vector>

#include "core/dtype.h"
#include "ops/broadcast.h"
#include "ops/op_spec.h"

namespace gsparse {

struct SddmmAlgorithm {
    SddmmSpec spec;
    FeatureLayout layout;
    DType dtype = DType::F32;

    // Inputs: COO in edge-id order (or destination order, see edges_grouped).
    Halide::ImageParam src_idx, dst_idx, lhs, rhs;
    Halide::Param<int32_t> num_edges{"num_edges"}, num_src{"num_src"}, num_dst{"num_dst"};

    Halide::Var e{"e"};
    std::vector<Halide::Var> f;  ///< canonical output feature dims, innermost first
    Halide::RDom r;              ///< dot's reduction over the last feature dimension (undefined otherwise)

    Halide::Func dot{"sddmm_dot"};  ///< defined for dot only
    Halide::Func out{"sddmm_out"};

    /// Whether the kernel is compiled with 64-bit indexing (set before a schedule is applied;
    /// schedules that rely on Halide's warp-shuffle lowering need 32-bit indexing).
    bool large_buffers = true;
    /// Edge grouping: when set (by a schedule, before lowering), the COO arrays are given in
    /// destination order (CSR order) and position e computes edge edge_of(e); edge-indexed operands
    /// are read at that id and the output stores are remapped to it (BindBufferStores), so results
    /// come back in edge-id order.
    bool edges_grouped = false;
    /// With edges_grouped: the destination order is regrouped by tiles of this many source ids
    /// (Graph::coo_by_dst(src_tile); 0: not regrouped). Only the arrays passed change.
    int64_t src_tile = 0;
    Halide::ImageParam edge_of;
    /// Custom lowering passes the schedule needs (run in order).
    std::vector<std::shared_ptr<Halide::Internal::IRMutator>> lowering_passes;
    /// Set by schedules whose vector loads assume operand rows aligned to this many bytes (the
    /// runtime checks the pointers; 0: element alignment).
    int operand_alignment = 0;

    std::vector<Halide::Argument> arguments() const;
    bool uses_lhs() const { return gsparse::uses_lhs(spec.op); }
    bool uses_rhs() const { return gsparse::uses_rhs(spec.op); }
    bool reads_src() const;
    bool reads_dst() const;
};

SddmmAlgorithm build_sddmm_algorithm(const SddmmSpec &spec, const FeatureLayout &layout, DType dtype);

}  // namespace gsparse
