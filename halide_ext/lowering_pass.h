// LoweringPass: the base of the extension's custom lowering passes.
//
// Halide calls a custom lowering pass's mutate() once with the whole lowered pipeline, and the
// IRMutator's own recursion then calls the same function for every sub-statement. LoweringPass tells
// the two apart: the outermost call resets the pass's rewrite counter and runs run(), which a pass
// overrides to reset its other per-pipeline state (scopes) or check its inputs before it mutates;
// nested calls are plain IRMutator::mutate. A pass object can so be run on several pipelines in turn.
#pragma once

#include <Halide.h>

namespace gsparse::ext {

class LoweringPass : public Halide::Internal::IRMutator {
public:
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) final {
        if (running_) return IRMutator::mutate(s);
        struct Running {
            bool &flag;
            explicit Running(bool &f) : flag(f) { flag = true; }
            ~Running() { flag = false; }
        } running(running_);
        rewritten_ = 0;
        return run(s);
    }
    using Halide::Internal::IRMutator::mutate;

    /// Rewrites (loops, stores, allocations: whatever the pass counts) of the last whole-pipeline run.
    int rewritten() const { return rewritten_; }

protected:
    /// Counts one rewrite of the current run.
    void count_rewrite() { rewritten_++; }
    /// One run over a whole pipeline's Stmt (mutate() inside it recurses as usual). The default
    /// just mutates it.
    virtual Halide::Internal::Stmt run(const Halide::Internal::Stmt &s) { return IRMutator::mutate(s); }

private:
    bool running_ = false;
    int rewritten_ = 0;
};

}  // namespace gsparse::ext
