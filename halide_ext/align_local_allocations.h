// Pass: a GPU thread's own allocations that are read or written with vector accesses are aligned for
// them.
//
// Halide 14's PTX back end allocates a kernel's register and stack buffers (an accumulator tile that
// stays outside the thread loops, for instance) as allocas of their element type, so aligned to one
// element, while its code generation infers the alignment of a dense vector access from the index
// alone, as for heap buffers (and turns 4-wide 32-bit accesses into one 128-bit access). A vector
// access of such an allocation then becomes `ld.local.v2` / `st.local.v4` on a local frame aligned to
// 4 bytes, and the GPU stops the kernel with "misaligned address". Alignment claims on the accesses
// cannot be lowered instead: Halide re-derives them from the index at code generation.
//
// Expects: a lowered Stmt at custom-lowering-pass time (after FuseGPUThreadLoops: shared buffers are
// GPUShared allocations; every other allocation inside a GPU block loop lives in the thread's local
// frame and has a constant size).
// Produces: the same Stmt in which each such allocation with a vector Load or Store of a scalar type
// narrower than 16 bytes is declared as vectors of 16 bytes (`float32 x 256` becomes `float32x4 x
// 64`, rounded up), so the back end's alloca is aligned to 16 bytes. Loads and Stores keep their
// element types and indices (the back end addresses them from the allocation's base pointer).
// Global and shared memory are left as they are. Run it last: Halide's simplifier does not expect an
// allocation whose type differs from its accesses' (a later pass that simplifies the Stmt, such as
// BlockUniformLoop, removed a whole kernel of such a pipeline).
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

#include <map>
#include <string>

namespace gsparse::ext {

class AlignLocalAllocations : public LoweringPass {
public:
    /// Allocations the last mutate() of a whole pipeline realigned.
    int realigned() const { return rewritten(); }


    /// The bytes each realigned allocation is aligned to.
    static constexpr int kAlignBytes = 16;

protected:
    Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) override;
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Allocate *op) override;
    Halide::Expr visit(const Halide::Internal::Load *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Store *op) override;

private:
    void saw(const std::string &name, const Halide::Type &t);

    /// Thread-frame allocations in scope, and whether a vector access of each was seen.
    std::map<std::string, bool> local_;
    int in_kernel_ = 0;
};

}  // namespace gsparse::ext
