// Operands of user programs read at a column that depends on the feature (dsl::Columns): one
// weight a head over the head's features, a vector shared by the heads. CPU numerics of g-SpMM- and
// per-edge programs against plain C++ loops on the random graphs (empty rows, a very long row,
// duplicates, self-loops, bipartite), sum and max, one head and one feature a head, under aligned
// rows too; the columns each feature reads; the errors (a column outside
// the operand, a column that reads more than the feature, no columns, a tensor of the wrong width)
// naming the operand's line; the derived backward's column count; the CUDA kernel's PTX.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dsl/user_gradients.h"
#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"
#include "support/compare.h"
#include "support/cuda_user_schedules.h"
#include "support/random_graph.h"
#include "support/throws_with.h"
#include "support/user_program_cases.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Columns;
using dsl::Monoid;
using dsl::SpmmProgram;
using test::expect_close;

/// out[v, f] = reduce over in-edges of x[u, f] * a[e, f / D] + b[v, f % D]: H heads of D features,
/// a weight per edge and head, a vector of D per destination shared by the heads.
SpmmProgram heads(const std::string &name, int H, int D, Monoid m) {
    SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr a = p.operand("a", At::Edge, Columns{H, p.feature() / D});
    Halide::Expr b = p.operand("b", At::Dst, Columns{D, p.feature() % D});
    p.message(x * a + b);
    p.reduce(std::move(m));
    return p;
}

Tensor heads_reference(const Graph &g, int H, int D, const Tensor &x, const Tensor &a, const Tensor &b, bool max) {
    const CSR &csr = g.csr();
    const int F = H * D;
    Tensor out = Tensor::zeros({csr.num_rows, F}, DType::F32);
    for (int64_t v = 0; v < csr.num_rows; ++v) {
        if (csr.row_length(v) == 0) continue;
        for (int f = 0; f < F; ++f) {
            double acc = max ? -INFINITY : 0.0;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p) {
                const double m = double(x.data_as<float>()[csr.col_idx[p] * F + f]) *
                                     a.data_as<float>()[csr.edge_id(p) * H + f / D] +
                                 double(b.data_as<float>()[v * D + f % D]);
                acc = max ? std::max(acc, m) : acc + m;
            }
            out.data_as<float>()[v * F + f] = static_cast<float>(acc);
        }
    }
    return out;
}

TEST(UserColumns, HeadOperandsMatchPlainLoops) {
    // 4 heads of 3 features, one head of 5, 3 heads of one feature, 2 of 4; the default schedule at
    // two points, and rows of 4-wide aligned vectors (aligned_rows) where F allows.
    for (const auto &[H, D] : std::vector<std::pair<int, int>>{{4, 3}, {1, 5}, {3, 1}, {2, 4}}) {
        const int F = H * D;
        for (const bool max : {false, true}) {
            SpmmProgram p = heads(max ? "heads_max" : "heads_sum", H, D, max ? Monoid::max() : Monoid::sum());
            std::vector<dsl::SpmmKernel> kernels;
            kernels.push_back(p.compile(F));
            kernels.push_back(p.compile(F, Device::CPU, dsl::default_schedule(), {{"vector_width", 4}, {"rows_per_task", 1}}));
            if (F % 4 == 0)
                kernels.push_back(p.compile(F, Device::CPU, test::vector_rows_schedule(), {{"vector", 4}}));
            for (const test::Case &c : test::graphs()) {
                Graph g = test::random_graph(90 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), a = test::random_tensor({g.num_edges(), H}, 2),
                       b = test::random_tensor({g.num_dst(), D}, 3);
                const Tensor want = heads_reference(g, H, D, x, a, b, max);
                for (const dsl::SpmmKernel &k : kernels) {
                    Tensor got = test::random_tensor({g.num_dst(), F}, 4);
                    k.run(g, {{"x", x}, {"a", a}, {"b", b}}, got);
                    expect_close(got, want, 1e-5,
                                 std::string(c.name) + " H=" + std::to_string(H) + " D=" + std::to_string(D) + " " +
                                     k.schedule());
                }
            }
        }
    }
}

TEST(UserColumns, PerEdgeProgramsReadColumnsToo) {
    // score[e, f] = x[u, f] * a[v, f / D]: per-head weights of the destination on every edge.
    const int H = 3, D = 2, F = H * D;
    dsl::SddmmProgram p("edge_heads");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr a = p.operand("a", At::Dst, Columns{H, p.feature() / D});
    p.edge_value(x * a);
    dsl::SddmmKernel k = p.compile(F);
    for (const test::Case &c : test::graphs()) {
        Graph g = test::random_graph(5, c.opt);
        Tensor xs = test::random_tensor({g.num_src(), F}, 1), as = test::random_tensor({g.num_dst(), H}, 2);
        Tensor got = Tensor::empty({g.num_edges(), F}, DType::F32), want = Tensor::zeros({g.num_edges(), F}, DType::F32);
        const CSR &csr = g.csr();
        for (int64_t v = 0; v < csr.num_rows; ++v)
            for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q)
                for (int f = 0; f < F; ++f)
                    want.data_as<float>()[csr.edge_id(q) * F + f] =
                        xs.data_as<float>()[csr.col_idx[q] * F + f] * as.data_as<float>()[v * H + f / D];
        k.run(g, {{"x", xs}, {"a", as}}, got);
        expect_close(got, want, 1e-6, c.name);
    }
}

TEST(UserColumns, ColumnMapsAndErrorsNameTheOperand) {
    SpmmProgram p = heads("heads_map", 4, 3, Monoid::sum());
    EXPECT_EQ(p.column_map("a", 12), (std::vector<int32_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}));
    EXPECT_EQ(p.column_map("b", 6), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
    EXPECT_TRUE(p.column_map("x", 12).empty());
    const std::vector<dsl::OperandInfo> info = p.operands();
    ASSERT_EQ(info.size(), 3u);
    EXPECT_EQ(info[0].columns, 0);
    EXPECT_EQ(info[1].columns, 4);
    EXPECT_EQ(info[2].columns, 3);
    // F = 15 reads column 4 of a's 4 (feature 12 / 3); the error names the operand's line.
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { p.compile(15); },
                                              {"heads_map", "operand 'a'", "test_user_columns.cpp:", "of 4 columns",
                                               "column 4 for feature 12"}));
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { p.column_map("w", 4); }, {"no operand 'w'"}));
    // A column that reads the source id is not one column per feature.
    SpmmProgram q("by_source");
    Halide::Expr x = q.operand("x", At::Src);
    q.message(x * q.operand("a", At::Edge, Columns{2, q.src() % 2}));
    q.reduce(Monoid::sum());
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { q.compile(4); },
                                              {"operand 'a'", "not a constant for feature 0", "feature() and constants"}));
    SpmmProgram r("no_columns");
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { r.operand("a", At::Edge, Columns{0, r.feature()}); },
                                              {"operand 'a'", "0 columns"}));
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { r.operand("a", At::Edge, Columns{2, Halide::Expr(0.5f)}); },
                                              {"integer expression"}));
    // A tensor of other than the declared columns.
    dsl::SpmmKernel k = p.compile(12);
    Graph g = test::random_graph(3);
    Tensor got = Tensor::empty({g.num_dst(), 12}, DType::F32);
    EXPECT_TRUE(test::throws_with<ShapeError>(
        [&] {
            k.run(g,
                  {{"x", test::random_tensor({g.num_src(), 12}, 1)}, {"a", test::random_tensor({g.num_edges(), 12}, 2)},
                   {"b", test::random_tensor({g.num_dst(), 3}, 3)}},
                  got);
        },
        {"operand 'a'", "must be [" + std::to_string(g.num_edges()) + ", 4]"}));
}

TEST(UserColumns, DerivedBackwardKnowsTheColumns) {
    // The sum's backward: a's gradient is a per-edge program over the features, summed by column.
    SpmmProgram p = heads("heads_grad", 2, 3, Monoid::sum());
    const dsl::ProgramGradients grads = dsl::derive_gradients(p);
    ASSERT_EQ(grads.operands.size(), 3u);
    EXPECT_EQ(grads.operands[0].columns, 0);
    EXPECT_EQ(grads.operands[1].columns, 2);
    EXPECT_EQ(grads.operands[2].columns, 3);
    EXPECT_EQ(grads.operands[1].form, dsl::OperandGradient::Form::Edges);
    // The gradient programs declare the operands they read with the same columns.
    ASSERT_TRUE(grads.operands[0].rows);
    for (const dsl::OperandInfo &o : grads.operands[0].rows->operands()) {
        if (o.name == "a") {
            EXPECT_EQ(o.columns, 2);
        }
    }
}

TEST(UserColumns, CudaKernelsCompile) {
    // The kernels GpuUserProgram.ColumnOperandsMatchTheCpu runs: the default schedule (lanes of
    // nonzeros), a thread per row and feature, aligned vector rows (a's and b's loads of 4-wide
    // groups: a one value, b a vector).
    SpmmProgram p = heads("heads_cuda", 4, 8, Monoid::sum());
    for (const std::string &ptx :
         {p.compile(32, Device::CUDA).assembly(),
          p.compile(32, Device::CUDA, dsl::default_schedule(), {{"nnz_lanes", 1}}).assembly(),
          p.compile(32, Device::CUDA, test::vector_rows_schedule(), {{"vector", 4}}).assembly()})
        EXPECT_NE(ptx.find(".entry"), std::string::npos);
    const std::string vec = p.compile(32, Device::CUDA, test::vector_rows_schedule(), {{"vector", 4}}).assembly();
    EXPECT_NE(vec.find("ld.global.nc.v4.f32"), std::string::npos) << vec;
}

}  // namespace
}  // namespace gsparse
