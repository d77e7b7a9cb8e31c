// User programs whose schedules declare their rows dense and aligned (dsl::ScheduleContext::
// aligned_rows), so that a thread's features are one vector access: CPU numerics against plain C++
// loops on the random graphs (empty rows, a very long row, duplicates, self-loops, bipartite), sum
// and max, vectors of 1 to 8 and odd F with vector 1, rows in order of in-degree; the layout the lowered statement checks; the
// constraints taken away again for a kernel of the same program without them; misaligned tensors
// and vectors that do not divide F refused by name; the CUDA kernel's PTX (vector loads and stores
// with aligned rows, scalar ones without).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dsl/user_spmm.h"
#include "support/compare.h"
#include "support/cuda_user_schedules.h"
#include "support/random_graph.h"
#include "support/text_count.h"
#include "support/throws_with.h"
#include "support/user_program_cases.h"
#include "support/weighted_program.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Monoid;
using dsl::SpmmProgram;
using test::count_of;
using test::expect_close;

TEST(UserAlignedRows, VectorRowsMatchPlainLoops) {
    const dsl::ScheduleDef def = test::vector_rows_schedule();
    for (const auto &[max, F] : std::vector<std::pair<bool, int>>{{false, 1}, {false, 7}, {false, 8}, {false, 24}, {true, 12}}) {
        SpmmProgram p = test::weighted_program(max ? "aligned_max" : "aligned_sum", max ? Monoid::max() : Monoid::sum());
        std::vector<dsl::SpmmKernel> kernels;
        for (int64_t V : {1, 2, 4, 8})
            for (int64_t aligned : {0, 1})
                if (F % V == 0) kernels.push_back(p.compile(F, Device::CPU, def, {{"vector", V}, {"aligned", aligned}}));
        // Rows in order of in-degree too: the stores, remapped by row, keep the output's row stride
        // a parameter.
        dsl::ScheduleDef balanced = def;
        balanced.name = "vector_rows_balanced";
        balanced.apply = [apply = def.apply](dsl::ScheduleContext &c) {
            c.balanced_rows();
            apply(c);
        };
        kernels.push_back(p.compile(F, Device::CPU, balanced, {{"vector", F % 4 == 0 ? 4 : 1}}));
        ASSERT_GE(kernels.size(), 3u);
        for (const test::Case &c : test::graphs()) {
            Graph g = test::random_graph(50 + F, c.opt);
            Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                   y = test::random_tensor({g.num_dst(), F}, 3);
            const Tensor want = test::weighted_reference(g, F, x, w, y, max);
            for (const dsl::SpmmKernel &k : kernels) {
                Tensor got = test::random_tensor({g.num_dst(), F}, 4);
                k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                expect_close(got, want, 1e-5, std::string(c.name) + " F=" + std::to_string(F) + " " + k.schedule());
            }
        }
    }
}

TEST(UserAlignedRows, LayoutIsCheckedOnlyWhereDeclared) {
    // The operands' layout belongs to the program and is shared by its kernels: a kernel compiled
    // without aligned_rows after one with it checks no layout and runs on misaligned rows.
    const int F = 8;
    SpmmProgram p = test::weighted_program("aligned_layout", Monoid::sum());
    const dsl::ScheduleDef def = test::vector_rows_schedule();
    dsl::SpmmKernel aligned = p.compile(F, Device::CPU, def, {{"vector", 4}, {"aligned", 1}});
    dsl::SpmmKernel loose = p.compile(F, Device::CPU, def, {{"vector", 4}, {"aligned", 0}});
    const std::string with = aligned.lowered_stmt(), without = loose.lowered_stmt();
    // The constraints are asserted at the pipeline's entry: the stride of x's rows and the extent of
    // its feature dimension.
    for (const char *what : {"\"aligned_layout_x.stride.1\"", "\"aligned_layout_x.extent.0\"", "\"aligned_layout_out.stride.1\""}) {
        EXPECT_EQ(count_of(with, std::string("constraint_violated(") + what), 1u) << what;
        EXPECT_EQ(count_of(without, what), 0u) << what;
    }
    // x's host alignment (16 bytes) is asserted at the entry too.
    EXPECT_GT(count_of(with, "unaligned_host_ptr(\"aligned_layout_x\", 16)"), 0u);
    EXPECT_EQ(count_of(without, "unaligned_host_ptr(\"aligned_layout_x\""), 0u);

    Graph g = test::random_graph(77, test::graphs()[0].opt);
    Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
           y = test::random_tensor({g.num_dst(), F}, 3);
    const Tensor want = test::weighted_reference(g, F, x, w, y, false);
    // x's rows one element off their allocation's alignment.
    Tensor storage = Tensor::empty({g.num_src() * F + 1}, DType::F32);
    std::copy(x.data_as<float>(), x.data_as<float>() + x.numel(), storage.data_as<float>() + 1);
    Tensor shifted = Tensor::wrap(storage.data_as<float>() + 1, {g.num_src(), F}, DType::F32);
    Tensor got = Tensor::empty({g.num_dst(), F}, DType::F32);
    loose.run(g, {{"x", shifted}, {"w", w}, {"y", y}}, got);
    expect_close(got, want, 1e-5, "without aligned_rows, misaligned x");
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { aligned.run(g, {{"x", shifted}, {"w", w}, {"y", y}}, got); },
                                              {"aligned_layout", "operand 'x'", "16-byte aligned", "aligned_rows"}));
    // A misaligned output is refused too; aligned tensors run.
    Tensor out_storage = Tensor::empty({g.num_dst() * F + 1}, DType::F32);
    Tensor out_shifted = Tensor::wrap(out_storage.data_as<float>() + 1, {g.num_dst(), F}, DType::F32);
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { aligned.run(g, {{"x", x}, {"w", w}, {"y", y}}, out_shifted); },
                                              {"out", "16-byte aligned"}));
    aligned.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
    expect_close(got, want, 1e-5, "aligned_rows");
}

TEST(UserAlignedRows, VectorsThatDoNotDivideTheFeaturesAreRefused) {
    SpmmProgram p = test::weighted_program("aligned_bad", Monoid::sum());
    dsl::ScheduleDef def;
    def.name = "aligned_by_knob";
    def.knobs = {{"vector", {3, 4}, 4}};
    def.apply = [](dsl::ScheduleContext &c) { c.aligned_rows(static_cast<int>(c.knob("vector"))); };
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(6, Device::CPU, def); },
                                                 {"aligned_rows(4)", "divisible by 4", "got 6"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(6, Device::CPU, def, {{"vector", 3}}); },
                                                 {"aligned_rows", "1, 2, 4 or 8", "got 3"}));
}

TEST(UserAlignedRows, CudaKernelLoadsAndStoresVectors) {
    // 4-wide groups: with aligned rows the gathers of x, the loads of y and the stores of out are
    // 128-bit loads and the outputs wider stores; without, Halide cannot prove them aligned and the back end splits them.
    SpmmProgram p = test::weighted_program("aligned_cuda", Monoid::sum());
    const dsl::ScheduleDef def = test::vector_rows_schedule();
    const std::string vec = p.compile(16, Device::CUDA, def, {{"vector", 4}, {"aligned", 1}}).assembly();
    const std::string scalar = p.compile(16, Device::CUDA, def, {{"vector", 4}, {"aligned", 0}}).assembly();
    auto v4_loads = [](const std::string &ptx) {
        return count_of(ptx, "ld.global.v4.f32") + count_of(ptx, "ld.global.nc.v4.f32");
    };
    EXPECT_GE(v4_loads(vec), 2u) << vec;
    EXPECT_EQ(count_of(vec, "st.global.f32"), 0u) << vec;  // the 4 outputs in wider stores
    EXPECT_EQ(v4_loads(scalar), 0u) << scalar;
    EXPECT_GE(count_of(scalar, "st.global.f32"), 4u) << scalar;
}

}  // namespace
}  // namespace gsparse
