// Pass: atomic adds of a serial loop accumulated in registers while their address stays the same.
//
// A scatter `out(f, dst_idx(p)) += msg` scheduled with atomic() and a serial inner loop over a run
// of consecutive edges p lowers to one atomic add per edge. When consecutive edges hit the same
// output element (edges grouped by destination, as in a CSR), all but the last of those adds are
// wasted memory traffic -- and on long rows, contention on one address from every run of the row.
// This pass keeps a run's partial sum in a register and adds it to memory once per change of
// address, the segment reduction of merge-path and GeoT SpMM:
//
//   for (j, 0, C) { ... atomic { out[i] = out[i] + v } ... }
//
// becomes
//
//   run_index = -1;  run_sum = 0
//   for (j, 0, C) { ... let idx = i in
//                   if (idx != run_index) { if (run_index >= 0) atomic { out[run_index] += run_sum }
//                                           run_index = idx;  run_sum = 0 }
//                   run_sum = run_sum + v ... }
//   if (run_index >= 0) atomic { out[run_index] += run_sum }
//
// with run_index and run_sum per-thread allocations of one element (registers on the GPU). A body
// with several atomic adds (a thread's register tile of K features, unrolled: K addresses an edge)
// gets one register pair per add, each flushed on its own change of address. The sum of each
// address is unchanged up to the order of its additions.
//
// Expects: a lowered Stmt at custom-lowering-pass time, after AtomicAddStores (which gives the
// atomic store and its load the same index). Rewrites serial For loops whose name ends with
// "." + loop_var and whose body's Atomic nodes (at least one) are all without a mutex around one
// scalar Store `out[i] = out[i] + v` (or `v + out[i]`) of a non-negative index; other loops are
// left as they are.
// Produces: the rewritten loops (rewritten() counts them).
#pragma once

#include <Halide.h>

#include <string>

#include "halide_ext/lowering_pass.h"

namespace gsparse::ext {

class AccumulateAtomicRuns : public LoweringPass {
public:
    explicit AccumulateAtomicRuns(std::string loop_var) : loop_var_(std::move(loop_var)) {}

protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;

private:
    std::string loop_var_;
    int next_id_ = 0;
};

}  // namespace gsparse::ext
