// limit_kernel_registers on modules compiled for CUDA (no GPU needed): every kernel entry of the
// embedded PTX gets `.maxnreg N` between its parameters and its body, the PTX keeps its length, and
// the object's host code carries the edited text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "halide_ext/kernel_register_limit.h"
#include "support/text_count.h"
#include "runtime/target.h"

namespace gsparse::ext {
namespace {

using namespace Halide;

/// A pipeline of two CUDA kernels (two stages computed at root).
Module two_kernel_module(const std::string &name) {
    ImageParam in(Float(32), 1, "in");
    Var x("x"), xo("xo"), xi("xi");
    Func a("a"), b("b");
    a(x) = in(x) * 2.0f;
    b(x) = a(x) + a(x + 1);
    a.compute_root().gpu_tile(x, xo, xi, 64);
    b.gpu_tile(x, xo, xi, 128);
    return Pipeline(b).compile_to_module({in}, name, jit_target(Device::CUDA));
}

using test::count_of;

TEST(KernelRegisterLimit, EveryEntryGetsTheDirectiveBeforeItsBody) {
    Module m = two_kernel_module("limited");
    const std::string before = embedded_ptx(m);
    ASSERT_EQ(count_of(before, ".entry "), 2u) << before;
    EXPECT_EQ(count_of(before, ".maxnreg"), 0u);
    EXPECT_EQ(limit_kernel_registers(m, 32), 2);
    const std::string after = embedded_ptx(m);
    EXPECT_EQ(after.size(), before.size());
    EXPECT_EQ(count_of(after, ".maxnreg 32"), 2u) << after;
    // Between the closing parenthesis of the parameters and the opening brace of the body.
    for (size_t at = after.find(".entry "); at != std::string::npos; at = after.find(".entry ", at + 1)) {
        const size_t close = after.find(')', at), directive = after.find(".maxnreg 32", at), body = after.find('{', at);
        EXPECT_LT(close, directive);
        EXPECT_LT(directive, body);
    }
    // The instructions are unchanged: only comment lines left.
    EXPECT_EQ(count_of(after, "ld.global"), count_of(before, "ld.global"));
    EXPECT_EQ(count_of(after, "st.global"), count_of(before, "st.global"));
    // A second limit is refused rather than stacked.
    EXPECT_THROW(limit_kernel_registers(m, 40), std::runtime_error);
}

TEST(KernelRegisterLimit, TheCompiledObjectCarriesTheEditedPtx) {
    Module m = two_kernel_module("limited_asm");
    limit_kernel_registers(m, 40);
    const std::string path =
        (std::filesystem::temp_directory_path() / ("gsparse_regs_" + std::to_string(::getpid()) + ".s")).string();
    m.compile({{OutputFileType::assembly, path}});
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    EXPECT_NE(text.str().find(".maxnreg 40"), std::string::npos);
}

TEST(KernelRegisterLimit, ZeroLeavesTheModuleAlone) {
    Module m = two_kernel_module("unlimited");
    const std::string before = embedded_ptx(m);
    EXPECT_EQ(limit_kernel_registers(m, 0), 0);
    EXPECT_EQ(embedded_ptx(m), before);
}

TEST(KernelRegisterLimit, TextWithoutRoomIsRefused) {
    const std::string ptx = ".version 7.0\n.visible .entry k(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";
    int n = -1;
    EXPECT_TRUE(ptx_with_register_limit(ptx, 32, &n).empty());  // no comment lines to take the room from
    EXPECT_EQ(n, 1);
    const std::string roomy = "// a comment line long enough for the directive\n" + ptx;
    const std::string edited = ptx_with_register_limit(roomy, 32, &n);
    ASSERT_EQ(edited.size(), roomy.size());
    EXPECT_NE(edited.find(")\n.maxnreg 32\n{"), std::string::npos) << edited;
    EXPECT_EQ(edited.find("// a comment"), std::string::npos);
    EXPECT_THROW(ptx_with_register_limit(".visible .entry k(\n)\n.maxnreg 8\n{\n}\n// padding padding\n", 32),
                 std::runtime_error);
}

}  // namespace
}  // namespace gsparse::ext
