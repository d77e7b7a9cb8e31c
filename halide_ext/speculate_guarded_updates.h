// Pass: if-conversion of guarded accumulator updates, so that the loads of an unrolled reduction
// loop are issued together.
//
// An unrolled reduction over a ragged range (a lane's nonzeros of a row, kNnzUnroll at a time) is
// lowered by Halide with each unrolled step under the guard of the steps before it:
//
//     for (koo, ...) {
//       acc[0] = acc[0] + X[col_idx[p] ...]
//       if (p + 4 < end) {
//         acc[0] = acc[0] + X[col_idx[p + 4] ...]
//         if (p + 8 < end) { ... }
//       }
//     }
//
// ptxas does not move a global load above the branch that guards it, so each step's load of a
// neighbour id and of its features waits for the previous step: the unroll buys no memory-level
// parallelism.
//
// Expects: a lowered Stmt at custom-lowering-pass time; the For loops whose names start with
// `loop_prefix` and contain `loop_part` are the ones to convert. The buffers in `speculable` are
// non-empty whenever those loops run (for g-SpMM: a row with a nonzero means col_idx and the
// operands have elements), and an element they hold never makes a later load go out of bounds
// (graph validation keeps every neighbour id in range).
// Produces: inside those loops, every `if (c) S` without an else branch whose body consists only of
// LetStmts, nested such ifs and sum updates `a[i] = a[i] + e` of an allocation made inside the
// kernel (a thread's accumulator), reading only scalar elements of speculable buffers, is replaced
// by its body: each update becomes `a[i] = a[i] + select(c', e', 0)` and each Let value and
// nested condition reads through the guard in the same way, c' being the conjunction of the
// enclosing guards and e' being e with every load's index replaced by `select(c', index, 0)`
// (except loads that the outermost guard, evaluated anyway, already makes).
// A load whose guard fails reads element 0 instead of an element the guard protected (the
// simplifier may have used the guard to drop a clamp), and its value never reaches the sum: the
// value of a skipped step is the identity of +. Bodies that read other buffers or hold other
// statements stay guarded.
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

#include <set>
#include <string>
#include <vector>

namespace gsparse::ext {

class SpeculateGuardedUpdates : public LoweringPass {
public:
    SpeculateGuardedUpdates(std::string loop_prefix, std::string loop_part, std::set<std::string> speculable);

    /// Guarded updates converted by the last mutate() of a whole pipeline.
    int converted() const { return converted_; }


protected:
    Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) override;
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Allocate *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::IfThenElse *op) override;

private:
    /// Whether `s` (under guards) can be flattened: only LetStmts, Blocks, else-less ifs and sum
    /// updates of local allocations, reading speculable buffers.
    bool convertible(const Halide::Internal::Stmt &s) const;
    bool reads_only_speculable(const Halide::Expr &e) const;
    /// `s` with its guards folded into its updates' values; `guard` is the enclosing conjunction.
    Halide::Internal::Stmt flatten(const Halide::Internal::Stmt &s, const Halide::Expr &guard);

    std::string loop_prefix_, loop_part_;
    std::set<std::string> speculable_;
    std::set<std::string> local_allocations_;
    std::vector<Halide::Expr> unconditional_loads_;
    int in_loop_ = 0;
    int converted_ = 0;
};

}  // namespace gsparse::ext
