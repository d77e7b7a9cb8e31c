// Pass: block-uniform trip counts for staged sparse loops (the barrier rule of the paper's
// Algorithm 1).
//
// When a schedule stages a tile of a row's neighbours in shared memory at the outer split `ko` of
// the row's reduction domain, the `ko` loop sits inside the fused GPU thread loops and contains
// gpu_thread_barrier calls, so every thread of the block must run it the same number of times.
// Halide can only give it the bound of the reduction domain, which is the graph's maximum row
// length: every block would iterate to the longest row of the whole graph.
//
// Expects: a lowered Stmt at custom-lowering-pass time (after GPU thread-loop fusion, before
// kernels are split off) containing serial For loops named `loop_name`.
// Produces: the same Stmt in which each such loop's extent is min(extent, trips), where `trips` is
// a block-uniform Expr (it may read block ids, parameters and buffers, never thread ids): the
// largest chunk count of the rows of the block. Work inside the loop stays guarded by the original
// per-row predicates, so threads whose rows are shorter idle at the barriers.
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

#include <string>
#include <vector>

namespace gsparse::ext {

class BlockUniformLoop : public LoweringPass {
public:
    /// Throws Halide::CompileError later, in mutate(), if trips uses a GPU thread id.
    BlockUniformLoop(std::string loop_name, Halide::Expr trips);
    /// The same where trips reads the index of an enclosing loop that a schedule names before it is
    /// mapped to the GPU: `block_loop` is that loop's name as lowering first gives it (such as
    /// "out.s0.v.vo"), and trips reads it as an Int(32) Variable of that name. The pass replaces it
    /// by the enclosing loop of that name, or of that name mapped to GPU blocks
    /// (block_loop + ".__block_id_x", _y, _z), whichever encloses `loop_name`; copies of `loop_name`
    /// that no such loop encloses (the last partial block of a CPU loop, peeled off by loop
    /// partitioning) keep their extent, and rewritten() counts only the bounded loops.
    BlockUniformLoop(std::string loop_name, Halide::Expr trips, std::string block_loop);

    const std::string &loop_name() const { return loop_name_; }
    /// The enclosing loop whose index trips reads (empty for the two-argument form).
    const std::string &block_loop() const { return block_loop_; }

protected:
    Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) override;
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;

private:
    std::string loop_name_;
    Halide::Expr trips_;
    std::string block_loop_;
    std::vector<std::string> enclosing_;  ///< the enclosing loops that are block_loop (innermost last)
};

/// The largest number of `chunk`-sized chunks of the rows block_row0 .. block_row0 + rows - 1,
/// reading a row pointer array (a non-decreasing int32 buffer of the pipeline, min 0) as a lowered
/// Load: max_i ceil((row_ptr[r_i + 1] - row_ptr[r_i]) / chunk). row_ptr must have at least
/// block_row0 + rows + 1 elements. With a defined `order` (bind_buffer), the block's rows are
/// order[block_row0 + i] instead. With a defined `last_row`, rows past it read row last_row instead
/// (the last block of a graph whose row pointer array is not padded to whole blocks).
Halide::Expr block_max_chunks(const Halide::Internal::Parameter &row_ptr, const Halide::Expr &block_row0, int rows,
                              int chunk, const Halide::Internal::Parameter &order = Halide::Internal::Parameter(),
                              const Halide::Expr &last_row = Halide::Expr());

}  // namespace gsparse::ext
