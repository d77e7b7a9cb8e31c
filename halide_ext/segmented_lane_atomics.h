// Pass: a warp's atomic adds of consecutive edges combined by a segmented reduction over its lanes.
//
// A scatter `out(f, dst_idx(p)) += msg` whose edges p are spread over the 32 lanes of a warp (lane
// l of step j takes edge base + 32 j + l, so that the warp's loads of the edge arrays are coalesced)
// lowers to one atomic add per lane and step. Edges grouped by destination (a COO in CSR order) put
// runs of equal addresses on neighbouring lanes; this pass adds each run once. Per step, inside the
// warp (shfl.sync, every lane taking part):
//
//   head  = address differs from the previous lane's (lane 0: from the carried address)
//   s     = the inclusive segmented sum of the lanes' values over runs of equal addresses
//           (five shfl.up steps of value and head flag, the Hillis-Steele segmented scan)
//   s    += carry_sum on the lanes of the first run when it continues the carried address;
//           when it does not, lane 0 adds carry_sum to the carried address
//   the last lane of each run but lane 31 adds s to memory:  atomic { out[i] = out[i] + s }
//   (carry_index, carry_sum) = lane 31's (address, s), broadcast to every lane
//
// and after the step loop lane 0 adds the carried sum. A destination whose edges span the warp's
// steps (a long row) is so added once per warp, not once per step; a row of a few edges once per
// step it lies in. Runs are maximal groups of equal neighbouring addresses: any edge order stays
// correct (edges not grouped by destination only add more often). The order of the additions of a
// sum changes (a tree within a step).
//
// Expects: a lowered Stmt at custom-lowering-pass time, after AtomicAddStores. Rewrites serial For
// loops whose name ends with "." + step_var, with a constant extent, nested in the GPU thread loop
// of thread x (Halide names it ".__thread_id_x") with min 0 and extent 32 (the block's innermost
// thread dimension is then the warp's lanes: the schedule binds the lanes to it), and whose
// Atomic nodes are all mutex-free scalar adds `out[i] = out[i] + v` of a 32-bit value (float or
// int) at an int32 or int64 index (shuffled as two halves), not nested in a condition that depends on the lane (conditions that are
// the same for the whole warp, as the guard of a split over warps, are allowed: every lane reaches
// the shuffles together). Other loops are left as they are.
// Produces: the rewritten loops (rewritten() counts them).
#pragma once

#include <Halide.h>

#include <string>

#include "halide_ext/lowering_pass.h"

namespace gsparse::ext {

class SegmentedLaneAtomics : public LoweringPass {
public:
    explicit SegmentedLaneAtomics(std::string step_var) : step_var_(std::move(step_var)) {}

protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) override;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *op) override;

private:
    Halide::Internal::Stmt rewrite(const Halide::Internal::For *op, const Halide::Internal::Stmt &body);

    std::string step_var_;
    std::string lane_;                         ///< the enclosing lane loop's variable ("" outside one)
    Halide::Internal::Scope<> lane_dependent_; ///< Let-bound names whose values depend on the lane
    int next_id_ = 0;
};

}  // namespace gsparse::ext
