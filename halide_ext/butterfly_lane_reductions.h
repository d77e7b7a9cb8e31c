// Pass: a lane group's combine of its partial results becomes a butterfly of warp shuffles.
//
// A reduction rfactored over L lanes (gpu_lanes) and combined into one lane's accumulator is lowered
// by Halide 14's warp-shuffle pass into a serial loop that gathers every lane's partial in turn:
//
//   for (rl, 0, L) {
//     let t = llvm.nvvm.shfl.sync.idx(mask, v, rl, clamp)
//     if (cond) { acc[i] = acc[i] OP t }
//   }
//
// which is L shuffles and L dependent operations per combine (32 of each for a full warp). When the
// loop covers the whole shuffle segment (L lanes, `clamp` naming segments of exactly L lanes), the
// lanes hold the partials of one group, and OP is associative and commutative (+ of floats or
// integers, min, max), the same value is the butterfly
//
//   s0 = v;  s1 = s0 OP shfl.sync.bfly(mask, s0, L/2, 31);  ...;  s_k = s_{k-1} OP shfl.bfly(.., 1, 31)
//   if (cond) { acc[i] = acc[i] OP s_k }
//
// with log2(L) shuffles, after which every lane of the group holds the group's total. (For floats the
// order of the additions changes: a tree instead of a left-to-right sum.)
//
// Expects: a lowered Stmt at custom-lowering-pass time (after LowerWarpShuffles, whose hoisting puts
// the shuffle in a LetStmt ahead of the guarded update). The loop must be serial with min 0 and a
// constant power-of-two extent L in [2, 32]; v must not depend on the loop variable; the update's
// index and condition must not depend on it either; there must be no else branch.
// Produces: the same Stmt with every matching loop replaced as above. Anything else is left alone.
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

namespace gsparse::ext {

class ButterflyLaneReductions : public LoweringPass {
protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;
};

}  // namespace gsparse::ext
