// Pass: a GPU thread's register allocation that holds its whole block's tile is cut down to the part
// the thread touches.
//
// Halide 14 gives a Func computed at a GPU block loop and stored in registers (the g-SpMM
// accumulator tile: kMTile rows x kNTile * kNRegTile * kVecWidth features, threads over rows and
// features) one private copy of the whole block's tile per thread, indexed by the thread's own
// offset plus constants (`acc[tid.y * 256 + tid.x * 2 + 64]`). The per-thread copy is M·T·R·V
// elements, and since its indices depend on the thread id, LLVM keeps it in local memory (a
// `__local_depot` of kilobytes per thread) unless it manages to forward every access; with vector
// accesses it does not, and the kernel runs 60x slower.
//
// Each thread only ever touches the elements at its base offset plus the constants: the allocation
// can hold just those. This pass finds allocations (Register, Stack or Auto memory, inside a GPU
// block loop, constant size) whose every Load and Store index is one common base expression plus a
// constant (for vector accesses, ramps of such a start with a constant stride), where the base,
// with the enclosing Lets substituted, depends only on GPU block and thread ids and on names bound
// outside the allocation (no serial loop inside it, no Load). It then shrinks the allocation to the
// span of the constants and rewrites every index to its constant minus the smallest one. The
// accesses then have constant indices, which the back end promotes to registers.
//
// Expects: a lowered Stmt at custom-lowering-pass time (after FuseGPUThreadLoops). Allocations
// whose name is used other than by Loads and Stores (a buffer handle), and allocations with an
// access that does not fit the form, are left as they are.
// Produces: the same Stmt with each such allocation shrunk and its accesses reindexed. Run it
// before AlignLocalAllocations (which retypes the allocations it leaves in the local frame).
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

#include <memory>

namespace gsparse::ext {

class ExpandedLets;

class CompactThreadAllocations : public LoweringPass {
public:
    /// Allocations the last whole-pipeline run shrank.
    int compacted() const { return rewritten(); }

protected:
    Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) override;
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Allocate *op) override;

private:
    /// Expanded values of the LetStmts enclosing the current node.
    std::shared_ptr<ExpandedLets> lets_;  ///< set by run()
    int in_kernel_ = 0;
};

}  // namespace gsparse::ext
