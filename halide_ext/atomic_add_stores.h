// Pass: atomic read-modify-write stores in the single-index form code generation turns into an
// atomic add.
//
// A scatter update `out(f, col_idx(p)) += msg` scheduled with atomic() lowers to
// `atomic { out[i] = out[j] + msg }`, where Halide's CSE and simplifier may have written the store
// index i and the load index j differently (different Lets, terms in another order, a fused
// dimension split in one and not the other). Code generation then cannot see that the store adds
// to the value it loads and emits a compare-and-swap loop instead of one atomic add (on CUDA,
// `atom.cas` in a retry loop instead of `red.add`).
//
// Expects: a lowered Stmt at custom-lowering-pass time.
// Produces: the same Stmt in which each Store inside an Atomic node (without a mutex) whose value
// is `load(same buffer, j) + rest` or `rest + load(same buffer, j)`, with j provably equal to the
// store's index once the enclosing Lets are substituted, has the load's index replaced by the
// store's index. Nothing else changes.
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

namespace gsparse::ext {

class AtomicAddStores : public LoweringPass {
protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) override;
    Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *op) override;
    Halide::Expr visit(const Halide::Internal::Let *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Atomic *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Store *op) override;

private:
    /// e with the Let-bound variables in scope replaced by their values, recursively.
    Halide::Expr expand(const Halide::Expr &e) const;

    Halide::Internal::Scope<Halide::Expr> lets_;
    int in_atomic_ = 0;
};

}  // namespace gsparse::ext
