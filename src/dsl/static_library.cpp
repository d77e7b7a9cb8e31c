#include "dsl/static_library.h"

#include <filesystem>

#include "core/error.h"
#include "dsl/operands.h"

namespace gsparse::dsl {

void write_static_library(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                          const Halide::Target &target, const std::string &dir, const std::string &name,
                          const std::string &program) {
    check_identifier(name, "library name");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail<KernelError>("cannot create the folder '", dir, "' for user program ", program, ": ", ec.message());
    try {
        pipeline.compile_to_static_library(dir + "/" + name, args, name, target);
    } catch (const Halide::Error &e) {
        fail<KernelError>("compiling user program ", program, " to a static library failed: ", e.what());
    }
}

}  // namespace gsparse::dsl
