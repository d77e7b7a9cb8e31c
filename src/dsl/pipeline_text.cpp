#include "dsl/pipeline_text.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

#include "core/error.h"

namespace gsparse::dsl {

std::string assembly_text(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                          const std::string &fn_name, const Halide::Target &target, const std::string &what) {
    static std::atomic<int> counter{0};
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("gsparse_" + fn_name + "_" + std::to_string(getpid()) + "_" +
                               std::to_string(counter++) + ".s"))
                                 .string();
    try {
        pipeline.compile_to_assembly(path, args, fn_name, target);
    } catch (const Halide::Error &e) {
        fail<KernelError>("compiling ", what, " failed: ", e.what());
    }
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) fail<KernelError>("cannot read the assembly of ", what);
    std::string text;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    std::remove(path.c_str());
    return text;
}

}  // namespace gsparse::dsl
