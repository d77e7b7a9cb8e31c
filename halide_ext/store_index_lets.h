// Pass: store indices out of Lets, for passes that rewrite the index of a Store by its form.
//
// Halide's warp-shuffle lowering CSEs the flattened index of a Store into a Let (`let t = <row> *
// out.stride.1 + <feature>`, then `out[t] = ...`). A later pass that looks for the row term of the
// index (BindBufferStores) then sees only `t`.
//
// Expects: a lowered Stmt at custom-lowering-pass time.
// Produces: the same Stmt in which each Store into one of the named buffers whose index is a
// Variable bound by an enclosing Let or LetStmt has that Variable replaced by its bound value (one
// level: the value may itself name Let-bound variables, which stay, unless the value does not
// mention the buffer's strides itself: then its Variables whose values do are replaced as below, as
// where the warp-shuffle lowering binds `t = lane + t.s`, `t.s = fo * 32 + v * out.stride.1`). A
// Store whose index merely contains such Variables (a vector store, ramp(t + f, 1, 4), as the CPU's
// CSE leaves it) has those whose values mention the buffer's strides replaced, so the row term is
// visible. The Lets stay in place.
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

#include <string>
#include <vector>

namespace gsparse::ext {

class StoreIndexLets : public LoweringPass {
public:
    explicit StoreIndexLets(std::vector<std::string> buffers);

protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *op) override;
    Halide::Expr visit(const Halide::Internal::Let *op) override;
    Halide::Internal::Stmt visit(const Halide::Internal::Store *op) override;

private:
    std::vector<std::string> buffers_;
    Halide::Internal::Scope<Halide::Expr> lets_;
};

}  // namespace gsparse::ext
