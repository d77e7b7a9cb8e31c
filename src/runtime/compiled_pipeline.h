// The pipeline of one scheduled graph-view algorithm compiled for one target: its lowering passes
// added, taken from the persistent kernel cache (kernel_library.h) when that holds it, else
// JIT-compiled once. What the graph-view kernels of one algorithm each (spmm_push_kernel.h,
// spmm_segment_kernel.h) share; they bind the arguments (view_call.h) and run it.
#pragma once

#include <Halide.h>

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel_library.h"

namespace gsparse {

class CompiledPipeline {
public:
    /// `out` scheduled, with `passes` (owned by the caller's algorithm, which must outlive this) and
    /// the pipeline's `arguments`; `name` keys the kernel cache and names the kernel in errors.
    CompiledPipeline(const Halide::Func &out, const std::vector<std::shared_ptr<Halide::Internal::IRMutator>> &passes,
                     std::vector<Halide::Argument> arguments, Device device, const std::string &name);
    /// A pipeline of several outputs (bound in this order by the call).
    CompiledPipeline(const std::vector<Halide::Func> &outs,
                     const std::vector<std::shared_ptr<Halide::Internal::IRMutator>> &passes,
                     std::vector<Halide::Argument> arguments, Device device, const std::string &name);

    Halide::Pipeline &pipeline() const { return pipeline_; }
    const Halide::Target &target() const { return target_; }
    /// The cached library, or null when the pipeline was JIT-compiled.
    const KernelLibrary *library() const { return library_.get(); }
    /// The lowered statement (with the PTX of CUDA kernels).
    std::string lowered_stmt() const;

private:
    mutable Halide::Pipeline pipeline_;
    Halide::Target target_;
    std::vector<Halide::Argument> arguments_;
    std::shared_ptr<const KernelLibrary> library_;
};

}  // namespace gsparse
