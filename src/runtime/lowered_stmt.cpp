#include "runtime/lowered_stmt.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace gsparse {

std::string lowered_stmt_text(Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                              const Halide::Target &target) {
    static std::atomic<int> counter{0};
    const auto path = std::filesystem::temp_directory_path() /
                      ("gsparse_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".stmt");
    pipeline.compile_to_lowered_stmt(path.string(), args, Halide::Text, target);
    std::string text;
    if (FILE *f = std::fopen(path.c_str(), "r")) {
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
        std::fclose(f);
    }
    std::filesystem::remove(path);
    return text;
}

}  // namespace gsparse
