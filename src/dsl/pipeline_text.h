// The target assembly of a user program's pipeline as text (PTX for CUDA targets), for tests and
// for users reading what was generated.
#pragma once

#include <Halide.h>

#include <string>
#include <vector>

namespace gsparse::dsl {

/// Compiles pipeline to assembly under a temporary name and returns the text; KernelError (naming
/// what) when Halide rejects it.
std::string assembly_text(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                          const std::string &fn_name, const Halide::Target &target, const std::string &what);

}  // namespace gsparse::dsl
