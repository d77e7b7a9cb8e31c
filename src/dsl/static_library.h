// A user program's pipeline as a static library and header (<dir>/<name>.a, <dir>/<name>.h), as
// Halide's generators produce them, for applications that link it without gsparse or a JIT.
#pragma once

#include <Halide.h>

#include <string>
#include <vector>

namespace gsparse::dsl {

/// Writes pipeline (arguments args, then its outputs) for target as function `name` (a C
/// identifier); ShapeError for a bad name, KernelError naming `program` when the folder cannot be
/// made or Halide rejects it.
void write_static_library(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                          const Halide::Target &target, const std::string &dir, const std::string &name,
                          const std::string &program);

}  // namespace gsparse::dsl
