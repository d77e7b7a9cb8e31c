// The lowered Halide statement of a scheduled pipeline, as text, for inspection and IR tests.
#pragma once

#include <Halide.h>

#include <string>
#include <vector>

namespace gsparse {

std::string lowered_stmt_text(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                              const Halide::Target &target);

}  // namespace gsparse
