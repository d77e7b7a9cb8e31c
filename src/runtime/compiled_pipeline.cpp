#include "runtime/compiled_pipeline.h"

#include <utility>

#include "runtime/lowered_stmt.h"
#include "runtime/target.h"

namespace gsparse {

CompiledPipeline::CompiledPipeline(const Halide::Func &out,
                                   const std::vector<std::shared_ptr<Halide::Internal::IRMutator>> &passes,
                                   std::vector<Halide::Argument> arguments, Device device, const std::string &name)
    : CompiledPipeline(std::vector<Halide::Func>{out}, passes, std::move(arguments), device, name) {}

CompiledPipeline::CompiledPipeline(const std::vector<Halide::Func> &outs,
                                   const std::vector<std::shared_ptr<Halide::Internal::IRMutator>> &passes,
                                   std::vector<Halide::Argument> arguments, Device device, const std::string &name)
    : pipeline_(outs), target_(jit_target(device)), arguments_(std::move(arguments)) {
    for (const auto &pass : passes) pipeline_.add_custom_lowering_pass(pass.get(), nullptr);
    library_ = KernelLibrary::get(pipeline_, arguments_, target_, name);
    if (!library_) jit_compile(pipeline_, target_, device, name);
}

std::string CompiledPipeline::lowered_stmt() const { return lowered_stmt_text(pipeline_, arguments_, target_); }

}  // namespace gsparse
