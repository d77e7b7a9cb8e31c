// User-written g-SpMM programs (dsl/user_spmm.h): results against plain C++ loops on random graphs
// (empty rows, a very long row, duplicate edges, self-loops, shuffled edge ids, bipartite), F = 1,
// odd F and F = 32; clear errors for incomplete programs and mismatched operands; the PTX a CUDA
// compilation emits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "api/gsparse.h"
#include "dsl/user_spmm.h"
#include "support/user_program_cases.h"
#include "support/compare.h"
#include "support/cuda_user_schedules.h"
#include "support/random_graph.h"
#include "support/text_count.h"
#include "support/throws_with.h"
#include "user_plugin/gat_attention.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Monoid;
using dsl::SpmmProgram;
using test::Case;
using test::expect_close;
using test::graphs;

/// out[v, f] = finalize(reduce over in-edges of message(f, u, v, e)), 0 without in-edges.
Tensor reference(const Graph &g, int F, double identity, const std::function<double(double, double)> &combine,
                 const std::function<double(int, int64_t, int64_t, int64_t)> &message,
                 const std::function<double(double, int64_t)> &finalize = nullptr) {
    const CSR &csr = g.csr();
    Tensor out = Tensor::zeros({csr.num_rows, F}, DType::F32);
    float *o = out.data_as<float>();
    for (int64_t v = 0; v < csr.num_rows; ++v) {
        const int64_t deg = csr.row_length(v);
        if (deg == 0) continue;
        for (int f = 0; f < F; ++f) {
            double acc = identity;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p)
                acc = combine(acc, message(f, csr.col_idx[p], v, csr.edge_id(p)));
            o[v * F + f] = static_cast<float>(finalize ? finalize(acc, deg) : acc);
        }
    }
    return out;
}

TEST(UserSpmm, AttentionWeightedSumMatchesPlainLoops) {
    // GAT's un-normalised aggregation: leaky_relu(a_src[u] + a_dst[v]) * x[u, f], summed.
    SpmmProgram p("gat_numerator");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr as = p.operand("a_src", At::Src, true);
    Halide::Expr ad = p.operand("a_dst", At::Dst, true);
    Halide::Expr s = as + ad;
    p.message(Halide::select(s > 0, s, 0.2f * s) * x);
    p.reduce(Monoid::sum());
    for (int F : {1, 7, 32}) {
        dsl::SpmmKernel k = p.compile(F);
        for (const Case &c : graphs()) {
            Graph g = test::random_graph(11 + F, c.opt);
            Tensor tx = test::random_tensor({g.num_src(), F}, 1), ta = test::random_tensor({g.num_src(), 1}, 2),
                   tb = test::random_tensor({g.num_dst(), 1}, 3);
            Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
            k.run(g, {{"x", tx}, {"a_src", ta}, {"a_dst", tb}}, out);
            const float *X = tx.data_as<float>(), *A = ta.data_as<float>(), *B = tb.data_as<float>();
            Tensor want = reference(g, F, 0.0, std::plus<double>(), [&](int f, int64_t u, int64_t v, int64_t) {
                const double sc = double(A[u]) + B[v];
                return (sc > 0 ? sc : 0.2 * sc) * X[u * F + f];
            });
            expect_close(out, want, 1e-4, std::string(c.name) + " F=" + std::to_string(F));
        }
    }
}

TEST(UserSpmm, WeightedMaxOverEdgeScalars) {
    SpmmProgram p("weighted_max");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(Monoid::max());
    for (int F : {1, 5}) {
        dsl::SpmmKernel k = p.compile(F);
        for (const Case &c : graphs()) {
            Graph g = test::random_graph(23 + F, c.opt);
            Tensor tx = test::random_tensor({g.num_src(), F}, 4);
            Tensor tw = test::random_tensor({g.num_edges(), 1}, 5, DType::F32, 0., 2.);
            Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
            k.run(g, {{"x", tx}, {"w", tw}}, out);
            const float *X = tx.data_as<float>(), *W = tw.data_as<float>();
            Tensor want = reference(g, F, -std::numeric_limits<double>::infinity(),
                                    [](double a, double b) { return std::max(a, b); },
                                    [&](int f, int64_t u, int64_t, int64_t e) { return double(X[u * F + f]) * W[e]; });
            expect_close(out, want, 1e-6, std::string(c.name) + " F=" + std::to_string(F));
        }
    }
}

TEST(UserSpmm, CustomLogSumExpMonoid) {
    // A numerically stable log-sum-exp as a user monoid: identity -inf, combine
    // max(a, x) + log1p(exp(-|a - x|)).
    Monoid lse{"logsumexp", [](Halide::Type t) { return t.min(); },
               [](Halide::Expr a, Halide::Expr x) {
                   Halide::Expr hi = Halide::max(a, x), lo = Halide::min(a, x);
                   // With a at the identity (the lowest float) exp underflows to 0: the result is x.
                   return hi + Halide::log(1.0f + Halide::exp(lo - hi));
               }};
    SpmmProgram p("lse");
    p.message(p.operand("x", At::Src) * 30.0f);  // large values: a plain sum of exp would overflow
    p.reduce(lse);
    const int F = 3;
    dsl::SpmmKernel k = p.compile(F);
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(31, c.opt);
        Tensor tx = test::random_tensor({g.num_src(), F}, 6, DType::F32, 0., 4.);
        Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
        k.run(g, {{"x", tx}}, out);
        const float *X = tx.data_as<float>();
        const CSR &csr = g.csr();
        Tensor want = Tensor::zeros({g.num_dst(), F}, DType::F32);
        for (int64_t v = 0; v < csr.num_rows; ++v) {
            if (csr.row_length(v) == 0) continue;
            for (int f = 0; f < F; ++f) {
                double m = -std::numeric_limits<double>::infinity(), s = 0;
                for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q)
                    m = std::max(m, 30.0 * X[csr.col_idx[q] * F + f]);
                for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q)
                    s += std::exp(30.0 * X[csr.col_idx[q] * F + f] - m);
                want.data_as<float>()[v * F + f] = static_cast<float>(m + std::log(s));
            }
        }
        expect_close(out, want, 1e-5, c.name);
    }
}

TEST(UserSpmm, MeanByFinalizeMatchesBuiltInOperator) {
    SpmmProgram p("user_mean");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::sum());
    p.finalize([](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast<float>(degree); });
    const int F = 9;
    dsl::SpmmKernel k = p.compile(F);
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(41, c.opt);
        Tensor tx = test::random_tensor({g.num_src(), F}, 7);
        Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
        k.run(g, {{"x", tx}}, out);
        expect_close(out, gspmm(g, "copy_lhs", "mean", tx, Tensor()).out, 1e-5, c.name);
    }
}

TEST(UserSpmm, ConstantMessageRunsOncePerInEdge) {
    // A message that reads no neighbour still counts every in-edge: the sum of 1 is the in-degree.
    SpmmProgram p("in_degree");
    p.message(Halide::Expr(1.0f));
    p.reduce(Monoid::sum());
    dsl::SpmmKernel k = p.compile(2);
    Graph g = test::random_graph(5);
    Tensor out = Tensor::empty({g.num_dst(), 2}, DType::F32);
    k.run(g, {}, out);
    for (int64_t v = 0; v < g.num_dst(); ++v)
        for (int f = 0; f < 2; ++f) EXPECT_EQ(out.data_as<float>()[v * 2 + f], float(g.csr().row_length(v))) << v;
}

TEST(UserSpmm, GraphWithoutEdgesGivesZeros) {
    SpmmProgram p("empty_sum");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::product());
    dsl::SpmmKernel k = p.compile(4);
    const std::vector<index_t> row_ptr(8, 0);
    Graph g = Graph::from_csr_arrays(7, 5, row_ptr.data(), nullptr, nullptr, 0);
    Tensor out = test::random_tensor({7, 4}, 9);
    k.run(g, {{"x", test::random_tensor({5, 4}, 8)}}, out);
    for (int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.data_as<float>()[i], 0.f);
}

TEST(UserSpmm, MonoidOverTuplesFusesSoftmaxAndAggregation) {
    // Large scores: a softmax without the running maximum would overflow exp.
    const int F = 5;
    dsl::SpmmKernel k = gsparse_examples::gat_attention("one_pass_attention").compile(F);
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(41, c.opt);
        Tensor x = test::random_tensor({g.num_src(), F}, 7), as = test::random_tensor({g.num_src(), 1}, 8, DType::F32, 0., 60.),
               ad = test::random_tensor({g.num_dst(), 1}, 9, DType::F32, 0., 60.);
        Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
        k.run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}}, out);
        const CSR &csr = g.csr();
        auto score = [&](int64_t u, int64_t v) {
            const double s = double(as.data_as<float>()[u]) + ad.data_as<float>()[v];
            return s > 0 ? s : 0.2 * s;
        };
        Tensor want = Tensor::zeros({g.num_dst(), F}, DType::F32);
        for (int64_t v = 0; v < csr.num_rows; ++v) {
            if (csr.row_length(v) == 0) continue;
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q) m = std::max(m, score(csr.col_idx[q], v));
            for (int f = 0; f < F; ++f) {
                double den = 0, num = 0;
                for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q) {
                    const double w = std::exp(score(csr.col_idx[q], v) - m);
                    den += w;
                    num += w * x.data_as<float>()[csr.col_idx[q] * F + f];
                }
                want.data_as<float>()[v * F + f] = static_cast<float>(num / den);
            }
        }
        expect_close(out, want, 1e-5, c.name);
    }
    // CUDA: one kernel, its PTX emitted (no GPU needed).
    dsl::SpmmKernel cuda = gsparse_examples::gat_attention("one_pass_attention_cuda").compile(64, Device::CUDA);
    EXPECT_NE(cuda.lowered_stmt().find("halide_cuda_run"), std::string::npos);
    const std::string ptx = cuda.assembly();
    size_t kernels = 0;
    for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) kernels++;
    EXPECT_EQ(kernels, 1u) << "scores, softmax and aggregation in one kernel\n" << ptx;
}

/// The weighted sum and the weighted mean of the in-edges from one pass: two outputs.
SpmmProgram sum_and_mean(const std::string &name) {
    SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w);
    p.reduce(Monoid::sum());
    p.finalize_outputs([](const Halide::Tuple &acc, Halide::Expr degree) {
        return Halide::Tuple(acc[0], acc[0] / Halide::cast<float>(degree));
    });
    return p;
}

TEST(UserSpmm, SeveralOutputsFromOnePass) {
    const int F = 5;
    dsl::SpmmKernel k = sum_and_mean("sum_and_mean").compile(F);
    ASSERT_EQ(k.num_outputs(), 2);
    // A monoid over tuples with several outputs: the attention-weighted sum, the rows' largest score
    // and the softmax's normaliser.
    SpmmProgram stats = gsparse_examples::gat_attention("attention_stats");
    stats.finalize_values(nullptr);
    stats.finalize_outputs(
        [](const Halide::Tuple &acc, Halide::Expr) { return Halide::Tuple(acc[2] / acc[1], acc[0], acc[1]); });
    dsl::SpmmKernel ks = stats.compile(F), k1 = gsparse_examples::gat_attention("attention_one").compile(F);
    ASSERT_EQ(ks.num_outputs(), 3);
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(43, c.opt);
        Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2);
        Tensor sum = test::random_tensor({g.num_dst(), F}, 3), mean = test::random_tensor({g.num_dst(), F}, 4);
        k.run(g, {{"x", x}, {"w", w}}, {&sum, &mean});
        expect_close(sum, gspmm(g, "mul", "sum", x, w).out, 1e-5, c.name);
        expect_close(mean, gspmm(g, "mul", "mean", x, w).out, 1e-5, c.name);

        Tensor as = test::random_tensor({g.num_src(), 1}, 5, DType::F32, 0., 30.),
               ad = test::random_tensor({g.num_dst(), 1}, 6, DType::F32, 0., 30.);
        Tensor one = Tensor::empty({g.num_dst(), F}, DType::F32), out = Tensor::empty({g.num_dst(), F}, DType::F32),
               m = Tensor::empty({g.num_dst(), F}, DType::F32), d = Tensor::empty({g.num_dst(), F}, DType::F32);
        const std::map<std::string, Tensor> ops = {{"x", x}, {"a_src", as}, {"a_dst", ad}};
        k1.run(g, ops, one);
        ks.run(g, ops, {&out, &m, &d});
        expect_close(out, one, 1e-6, c.name);
        const CSR &csr = g.csr();
        for (int64_t v = 0; v < csr.num_rows; ++v) {
            double best = -std::numeric_limits<double>::infinity();
            for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q) {
                const double sc = double(as.data_as<float>()[csr.col_idx[q]]) + ad.data_as<float>()[v];
                best = std::max(best, sc > 0 ? sc : 0.2 * sc);
            }
            for (int f = 0; f < F; ++f) {
                const float mv = m.data_as<float>()[v * F + f], dv = d.data_as<float>()[v * F + f];
                if (csr.row_length(v) == 0) {
                    EXPECT_EQ(mv, 0.f) << c.name << " row " << v;
                    EXPECT_EQ(dv, 0.f) << c.name << " row " << v;
                } else {
                    EXPECT_NEAR(mv, best, 1e-4 * (1 + std::abs(best))) << c.name << " row " << v;
                    EXPECT_GE(dv, 1.f - 1e-5f) << c.name << " row " << v;  // the largest score's term is 1
                    EXPECT_LE(dv, static_cast<float>(csr.row_length(v)) + 1e-3f) << c.name << " row " << v;
                }
            }
        }
    }
    // CUDA: the outputs come from one kernel (PTX emitted without a GPU).
    dsl::SpmmKernel cuda = sum_and_mean("sum_and_mean_cuda").compile(32, Device::CUDA);
    const std::string ptx = cuda.assembly();
    size_t kernels = 0;
    for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) kernels++;
    EXPECT_EQ(kernels, 1u) << ptx;
}

TEST(UserSpmm, SeveralOutputsErrorsNameTheProblem) {
    dsl::SpmmKernel k = sum_and_mean("sum_and_mean_errors").compile(3);
    Graph g = test::random_graph(44);
    Tensor x = test::random_tensor({g.num_src(), 3}, 1), w = test::random_tensor({g.num_edges(), 1}, 2);
    Tensor a = Tensor::empty({g.num_dst(), 3}, DType::F32), b = Tensor::empty({g.num_dst(), 4}, DType::F32);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", x}, {"w", w}}, a); },
                                         {"has 2 outputs but 1 tensor was given"}));
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", x}, {"w", w}}, {&a, &b}); }, {"out 1", "must be ["}));
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", x}, {"w", w}}, {&a, nullptr}); }, {"out 1 is null"}));
    // Static libraries take one output buffer each (the JIT's errors above are the caller's).
    const std::vector<std::string> args = k.argument_names();
    ASSERT_GE(args.size(), 2u);
    EXPECT_EQ(args[args.size() - 2], "sum_and_mean_errors_out_0");
    EXPECT_EQ(args.back(), "sum_and_mean_errors_out_1");
    EXPECT_TRUE(test::throws_with<Error>([] {
        SpmmProgram p = sum_and_mean("two_finalizers");
        p.finalize([](Halide::Expr acc, Halide::Expr) { return acc; });
        p.compile(3);
    }, {"one of finalize, finalize_values and finalize_outputs"}));
    EXPECT_TRUE(test::throws_with<Error>([] {
        SpmmProgram p("values_without_tuples");
        p.message(p.operand("x", At::Src));
        p.reduce(Monoid::sum());
        p.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[0]; });
        p.compile(3);
    }, {"finalize_values needs a monoid over tuples"}));
}

TEST(UserSpmm, MonoidOverTuplesErrorsNameTheProblem) {
    Monoid both = Monoid::sum();
    both.identity_values = [](Halide::Type t) { return Halide::Tuple(Halide::cast(t, 0)); };
    both.combine_values = [](const Halide::Tuple &a, const Halide::Tuple &) { return a; };
    EXPECT_TRUE(test::throws_with<Error>([&] { SpmmProgram("both").reduce(both); }, {"not both"}));
    EXPECT_TRUE(test::throws_with<Error>([] {
        SpmmProgram q = gsparse_examples::gat_attention("no_finalize");
        q.finalize_values(nullptr);
        q.compile(4);
    }, {"finalize_values"}));
    EXPECT_TRUE(test::throws_with<Error>([] {
        SpmmProgram p("tuple_message_sum");
        p.message(Halide::Tuple(p.operand("x", At::Src), p.operand("y", At::Src)));
        p.reduce(Monoid::sum());
        p.compile(4);
    }, {"2 values needs a monoid over tuples"}));
    EXPECT_TRUE(test::throws_with<Error>([] {
        SpmmProgram p = gsparse_examples::gat_attention("arity");
        Monoid short_combine;
        short_combine.name = "short";
        short_combine.identity_values = [](Halide::Type t) { return Halide::Tuple(t.min(), Halide::cast(t, 0)); };
        short_combine.combine_values = [](const Halide::Tuple &a, const Halide::Tuple &) { return Halide::Tuple(a[0]); };
        p.reduce(short_combine);
        p.compile(4);
    }, {"combines into 1 values but its identity has 2"}));
}

TEST(UserSpmm, ErrorsNameTheProblem) {
    EXPECT_TRUE(test::throws_with<Error>([] { SpmmProgram p("9lives"); }, {"not a C identifier"}));
    EXPECT_TRUE(test::throws_with<Error>([] { SpmmProgram p("ints", Halide::Int(32)); }, {"float32 or float64"}));
    // Errors about an operand or the message name the user's line (the builders' default arguments).
    // (Calls outside the assertion macros: a macro's arguments all take the macro's line.)
    SpmmProgram twice("twice");
    twice.operand("x", At::Src);
    const int first = __LINE__ - 1;
    auto declare_again = [&] { twice.operand("x", At::Dst); };
    const int again = __LINE__ - 1;
    EXPECT_TRUE(test::throws_with<Error>(declare_again,
                                         {"declared twice (at ", "test_user_spmm.cpp:" + std::to_string(again),
                                          "(first at ", "test_user_spmm.cpp:" + std::to_string(first)}));
    EXPECT_TRUE(test::throws_with<Error>([] { SpmmProgram("undefined").message(Halide::Expr()); },
                                         {"the message is undefined (at ", "test_user_spmm.cpp:"}));
    EXPECT_TRUE(test::throws_with<Error>([] { SpmmProgram("no_message").compile(4); }, {"has no message"}));
    EXPECT_TRUE(test::throws_with<Error>([] {
        SpmmProgram p("no_reduce");
        p.message(Halide::Expr(1.0f));
        p.compile(4);
    }, {"has no reduction"}));

    SpmmProgram p("checked");
    p.message(p.operand("x", At::Src) + p.operand("w", At::Edge, true));
    p.reduce(Monoid::sum());
    dsl::SpmmKernel k = p.compile(4);
    Graph g = test::random_graph(3);
    Tensor out = Tensor::empty({g.num_dst(), 4}, DType::F32);
    Tensor x = test::random_tensor({g.num_src(), 4}, 1), w = test::random_tensor({g.num_edges(), 1}, 2);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", x}}, out); },
                                         {"operand 'w' (read at the edge) is not given (declared at ",
                                          "test_user_spmm.cpp:"}));
    EXPECT_TRUE(
        test::throws_with<Error>([&] { k.run(g, {{"x", x}, {"w", w}, {"y", w}}, out); }, {"has no operand 'y'"}));
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", w}, {"w", w}}, out); }, {"operand 'x'"}));
    Tensor bad_out = Tensor::empty({g.num_dst(), 3}, DType::F32);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", x}, {"w", w}}, bad_out); }, {"out"}));
    Tensor x64 = Tensor::zeros({g.num_src(), 4}, DType::F64);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", x64}, {"w", w}}, out); }, {"dtype"}));
}

TEST(UserSpmm, CudaCompilationEmitsOneKernelWithBoundedGathers) {
    SpmmProgram p("gat_numerator_cuda");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
    p.message(Halide::select(s > 0, s, 0.2f * s) * x);
    p.reduce(Monoid::sum());
    dsl::SpmmKernel k = p.compile(64, Device::CUDA);
    const std::string stmt = k.lowered_stmt();
    // One kernel launch, and the ragged bound inference's bounds: col_idx is required on [0, num_edges)
    // (not past the last row's max_degree), the gathered sources on [0, num_src).
    EXPECT_NE(stmt.find("halide_cuda_run"), std::string::npos) << stmt;
    EXPECT_NE(stmt.find("halide_error_access_out_of_bounds(\"Input buffer col_idx\", 0, 0, num_edges + -1"),
              std::string::npos) << stmt;
    EXPECT_NE(stmt.find("halide_error_access_out_of_bounds(\"Input buffer gat_numerator_cuda_x\", 1, 0, num_src + -1"),
              std::string::npos) << stmt;
    const std::string ptx = k.assembly();
    EXPECT_NE(ptx.find(".entry"), std::string::npos);
    EXPECT_NE(ptx.find("ld.global"), std::string::npos);
    Graph g = test::random_graph(1);
    Tensor out = Tensor::empty({g.num_dst(), 64}, DType::F32);
    try {
        k.run(g, {}, out);
        ADD_FAILURE() << "running a CUDA user program without a CUDA launch did not raise";
    } catch (const ShapeError &e) {
        EXPECT_NE(std::string(e.what()).find("needs a CudaLaunch"), std::string::npos) << e.what();
    }
}

/// A CPU schedule that splits every row over `lanes` lanes of nonzeros (split_nnz_lanes).
dsl::ScheduleDef lanes_schedule() {
    dsl::ScheduleDef d;
    d.name = "cpu_lanes";
    d.knobs = {{"lanes", {2, 3, 8, 32}, 8}, {"steps", {1, 3}, 1}};
    d.apply = [](dsl::ScheduleContext &c) {
        dsl::NnzLanes n = c.split_nnz_lanes(static_cast<int>(c.knob("lanes")), static_cast<int>(c.knob("steps")));
        EXPECT_EQ(n.count, c.knob("lanes"));
        EXPECT_EQ(n.steps, c.knob("steps"));
        n.lanes.update().unroll(n.step);
        c.out.parallel(c.v);
        c.acc.compute_at(c.out, c.v);
        n.lanes.compute_at(c.out, c.v);
    };
    return d;
}

TEST(UserSpmm, LanesOfNonzerosMergeToTheInOrderResult) {
    // Each row's neighbours split over L lanes (lane l reduces positions l, l + L, ...), merged in
    // lane order: sum, max and GAT's online softmax (a monoid over tuples with merge_values) against
    // the in-order reduction of the default schedule, on rows longer and shorter than L.
    std::vector<std::pair<const char *, std::function<SpmmProgram(const std::string &)>>> programs = {
        {"sum", [](const std::string &name) {
             SpmmProgram p(name);
             Halide::Expr x = p.operand("x", At::Src);
             p.message(x * p.operand("w", At::Edge, true));
             p.reduce(Monoid::sum());
             return p;
         }},
        {"max", [](const std::string &name) {
             SpmmProgram p(name);
             Halide::Expr x = p.operand("x", At::Src);
             p.message(x * p.operand("w", At::Edge, true));
             p.reduce(Monoid::max());
             return p;
         }},
        {"attention", [](const std::string &name) {
             SpmmProgram p(name);
             Halide::Expr x = p.operand("x", At::Src);
             Halide::Expr s = 40.f * p.operand("w", At::Edge, true);  // large scores: the maximum matters
             p.message(Halide::Tuple(s, x));
             p.reduce(gsparse_examples::online_softmax());
             p.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[2] / acc[1]; });
             return p;
         }}};
    for (const auto &[what, make] : programs) {
        SpmmProgram in_order = make(std::string("in_order_") + what), split = make(std::string("lanes_") + what);
        for (int F : {1, 7}) {
            dsl::SpmmKernel want_k = in_order.compile(F);
            std::vector<std::pair<int64_t, dsl::SpmmKernel>> kernels;
            for (int64_t L : {3, 8, 32})
                kernels.emplace_back(L, split.compile(F, Device::CPU, lanes_schedule(), {{"lanes", L}, {"steps", L == 8 ? 1 : 3}}));
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(80 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2);
                Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
                want_k.run(g, {{"x", x}, {"w", w}}, want);
                for (const auto &[L, k] : kernels) {
                    Tensor got = Tensor::empty({g.num_dst(), F}, DType::F32);
                    k.run(g, {{"x", x}, {"w", w}}, got);
                    expect_close(got, want, 1e-5, std::string(what) + " " + c.name + " F=" + std::to_string(F) +
                                                      " L=" + std::to_string(L));
                }
            }
        }
    }
}

/// shift[v] = leaky_relu(max over v's in-edges of a_src[u] + a_dst[v]) (0 on rows without in-edges).
Tensor row_max_scores(const Graph &g, const Tensor &a_src, const Tensor &a_dst) {
    const CSR &csr = g.csr();
    Tensor shift = Tensor::zeros({csr.num_rows, 1}, DType::F32);
    for (int64_t v = 0; v < csr.num_rows; ++v) {
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p)
            best = std::max(best, a_src.data_as<float>()[csr.col_idx[p]] + a_dst.data_as<float>()[v]);
        if (csr.row_length(v) > 0) shift.data_as<float>()[v] = best > 0 ? best : 0.2f * best;
    }
    return shift;
}

TEST(UserSpmm, AttentionGivenTheRowMaximaMatchesTheOnlineSoftmax) {
    // gat_attention_shifted (a sum over tuples of exp(s - shift) weights) against the one-pass
    // online softmax, scores up to 120, with the log-sum-exp output against log(sum exp(s)).
    dsl::SpmmKernel online = gsparse_examples::gat_attention("online_ref").compile(7);
    dsl::SpmmKernel shifted = gsparse_examples::gat_attention_shifted("shifted_lse", true).compile(7);
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(17, c.opt);
        Tensor x = test::random_tensor({g.num_src(), 7}, 1),
               as = test::random_tensor({g.num_src(), 1}, 2, DType::F32, 0., 60.),
               ad = test::random_tensor({g.num_dst(), 1}, 3, DType::F32, 0., 60.);
        Tensor shift = row_max_scores(g, as, ad);
        Tensor want = Tensor::empty({g.num_dst(), 7}, DType::F32), got = Tensor::empty({g.num_dst(), 7}, DType::F32),
               lse = Tensor::empty({g.num_dst(), 7}, DType::F32);
        online.run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}}, want);
        shifted.run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}, {"shift", shift}}, {&got, &lse});
        expect_close(got, want, 1e-5, std::string("shifted ") + c.name);
        const CSR &csr = g.csr();
        for (int64_t v = 0; v < csr.num_rows; ++v) {
            double sum = 0;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p) {
                const double sc = double(as.data_as<float>()[csr.col_idx[p]]) + ad.data_as<float>()[v];
                sum += std::exp((sc > 0 ? sc : 0.2 * sc) - shift.data_as<float>()[v]);
            }
            const double want_lse = csr.row_length(v) ? shift.data_as<float>()[v] + std::log(sum) : 0.0;
            for (int f = 0; f < 7; ++f)
                EXPECT_NEAR(lse.data_as<float>()[v * 7 + f], want_lse, 1e-4 * (1 + std::abs(want_lse))) << c.name << " row " << v;
        }
    }
}

TEST(UserSpmm, LanesOfNonzerosErrorsNameTheProblem) {
    auto splitting = [](int lanes, int times) {
        dsl::ScheduleDef d;
        d.name = "split";
        d.apply = [lanes, times](dsl::ScheduleContext &c) {
            for (int i = 0; i < times; ++i) c.split_nnz_lanes(lanes);
        };
        return d;
    };
    // A monoid without a merge is not assumed commutative: no lanes.
    SpmmProgram ordered("ordered");
    ordered.message(ordered.operand("x", At::Src));
    Monoid first{"first_nonzero", [](Halide::Type t) { return Halide::Internal::make_zero(t); },
                 [](Halide::Expr a, Halide::Expr x) { return Halide::select(a == 0, x, a); }};
    ordered.reduce(first);
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { ordered.compile(4, Device::CPU, splitting(4, 1), {}); },
                                                 {"first_nonzero", "declares no merge"}));
    SpmmProgram summed("summed");
    summed.message(summed.operand("x", At::Src));
    summed.reduce(Monoid::sum());
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { summed.compile(4, Device::CPU, splitting(1, 1), {}); },
                                                 {"1 lanes is not in 2..32"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { summed.compile(4, Device::CPU, splitting(4, 2), {}); },
                                                 {"already split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CUDA, dsl::default_schedule(), {{"nnz_lanes", 1}, {"nnz_steps", 2}}); },
        {"nnz_steps, feature_vector and lane_merge apply to nnz_lanes > 1"}));
    // The default CUDA schedule: lanes only for monoids that merge, one row a block.
    EXPECT_NE(summed.compile(4, Device::CUDA).lowered_stmt().find("summed_lanes"), std::string::npos);
    EXPECT_EQ(ordered.compile(4, Device::CUDA).lowered_stmt().find("ordered_lanes"), std::string::npos);
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CUDA, dsl::default_schedule(), {{"nnz_lanes", 8}, {"rows_per_block", 4}}); },
        {"one row a block"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CPU, dsl::default_schedule(), {{"nnz_lanes", 8}}); }, {"CUDA knobs"}));
}

TEST(UserSpmm, CudaLanesOfNonzerosMergeInSharedMemory) {
    // GAT's attention on CUDA by default: a block of feature_tile x 8 lanes per row, each lane
    // reducing in registers and storing once to shared memory; after a barrier feature_tile
    // threads merge the lanes.
    dsl::SpmmKernel k = gsparse_examples::gat_attention("gat_lanes_cuda").compile(64, Device::CUDA);
    const std::string stmt = k.lowered_stmt(), ptx = k.assembly();
    EXPECT_NE(stmt.find("gat_lanes_cuda_lanes"), std::string::npos) << stmt;
    EXPECT_NE(ptx.find(".shared"), std::string::npos);
    EXPECT_NE(ptx.find("bar.sync"), std::string::npos);
    size_t entries = 0;
    for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) ++entries;
    EXPECT_EQ(entries, 1u);
    EXPECT_NE(k.schedule().find("nnz_lanes=0"), std::string::npos) << k.schedule();
}

TEST(UserSpmm, EveryPointOfTheDefaultScheduleGivesTheSameResult) {
    SpmmProgram p("att_points");
    Halide::Expr sc = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
    p.message(Halide::select(sc > 0, sc, 0.2f * sc) * p.operand("x", At::Src));
    p.reduce(Monoid::max());
    size_t fi = 0;
    for (int F : {1, 7, 32}) {
        const size_t half = fi++ % 2;  // every second point a feature length, alternating (keep CI short)
        size_t n = 0;
        Graph g = test::random_graph(60 + F, graphs()[0].opt);
        Tensor x = test::random_tensor({g.num_src(), F}, 1), as = test::random_tensor({g.num_src(), 1}, 2),
               ad = test::random_tensor({g.num_dst(), 1}, 3);
        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
        p.compile(F).run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}}, want);
        const auto space = dsl::default_schedule().space(F, Device::CPU);
        EXPECT_GE(space.size(), F >= 8 ? 24u : 8u) << "F=" << F;
        for (const auto &point : space) {
            // Rows by in-degree and rows in segments at one task size (BalancedRows* and
            // test_user_row_segments cover the directives themselves).
            if ((point.at("balanced_rows") || point.at("row_segments")) && point.at("rows_per_task") != 4) continue;
            if (n++ % 2 != half) continue;
            dsl::SpmmKernel k = p.compile(F, Device::CPU, dsl::default_schedule(), point);
            Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
            k.run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}}, out);
            expect_close(out, want, 0, k.schedule());
        }
    }
}

TEST(UserSpmm, InvalidSchedulePointsAreScheduleErrors) {
    SpmmProgram p("bad_points");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::sum());
    const dsl::ScheduleDef &d = dsl::default_schedule();
    auto expect_error = [&](const std::map<std::string, int64_t> &point, int F, Device dev, const std::string &needle) {
        EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(F, dev, d, point); }, {needle}))
            << dsl::point_str(d, point);
    };
    expect_error({{"unroll", 2}}, 8, Device::CPU, "has no knob 'unroll'");
    expect_error({{"rows_per_task", 3}}, 8, Device::CPU, "rows_per_task = 3 is not one of its choices");
    expect_error({{"feature_tile", 8}}, 8, Device::CPU, "CUDA knobs");
    expect_error({{"vector_width", 16}}, 4, Device::CPU, "at least twice the feature count");
    expect_error({{"rows_per_task", 4}}, 8, Device::CUDA, "CPU knobs");
    expect_error({{"feature_tile", 32}, {"rows_per_block", 64}}, 64, Device::CUDA, "1024 threads");
    // A valid CUDA point lowers without a GPU.
    dsl::SpmmKernel k = p.compile(64, Device::CUDA, d, {{"feature_tile", 16}, {"rows_per_block", 8}});
    EXPECT_NE(k.schedule().find("feature_tile=16"), std::string::npos) << k.schedule();
    EXPECT_NE(k.lowered_stmt().find("halide_cuda_run"), std::string::npos);
}

TEST(UserSpmm, UserScheduleWithItsOwnKnobsIsSearched) {
    // A schedule written by a user: rows split into tasks or not, in parallel or not, with a
    // validity rule tying the knobs together; search_schedule measures every valid point.
    dsl::ScheduleDef mine;
    mine.name = "my_rows";
    mine.knobs = {{"split", {1, 8, 32}, 1}, {"parallel", {0, 1}, 0}};
    mine.why_invalid = [](const std::map<std::string, int64_t> &pt, int, Device dev) -> std::string {
        if (dev != Device::CPU) return "a CPU schedule";
        return pt.at("parallel") == 0 && pt.at("split") > 1 ? "a serial loop needs no split" : "";
    };
    mine.apply = [](dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("split")), Halide::TailStrategy::GuardWithIf);
        if (c.knob("parallel")) c.out.parallel(vo);
        c.acc.compute_at(c.out, vi);
    };
    EXPECT_EQ(mine.space(16, Device::CPU).size(), 4u);  // (1, 0), (1, 1), (8, 1), (32, 1)
    EXPECT_TRUE(mine.space(16, Device::CUDA).empty());

    SpmmProgram p("searched");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(Monoid::sum());
    Graph g = test::random_graph(77);
    const int F = 16;
    Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2);
    Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32), out = Tensor::empty({g.num_dst(), F}, DType::F32);
    p.compile(F).run(g, {{"x", x}, {"w", w}}, want);
    auto measured = dsl::search_schedule(p, mine, F, Device::CPU, g, {{"x", x}, {"w", w}}, out, {}, 3);
    ASSERT_EQ(measured.size(), 4u);
    for (size_t i = 0; i < measured.size(); ++i) {
        EXPECT_GT(measured[i].median_ms, 0.0);
        if (i) {
            EXPECT_LE(measured[i - 1].median_ms, measured[i].median_ms);
        }
    }
    dsl::SpmmKernel best = p.compile(F, Device::CPU, mine, measured[0].point);
    best.run(g, {{"x", x}, {"w", w}}, out);
    expect_close(out, want, 1e-6, best.schedule());
}

TEST(UserSpmm, MeasurePointsTimesTheGivenPointsOnlyAndRefusesInvalidOnes) {
    // measure_points (gsparse-tune --budget): a chosen sample of the space, fastest first; a point
    // the schedule's rule refuses is a ScheduleError naming the reason, not a skipped point.
    dsl::ScheduleDef rows;
    rows.name = "rows";
    rows.knobs = {{"split", {1, 8, 32}, 1}};
    rows.why_invalid = [](const std::map<std::string, int64_t> &pt, int, Device) -> std::string {
        return pt.at("split") == 32 ? "split 32 is refused here" : "";
    };
    rows.apply = [](dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("split")), Halide::TailStrategy::GuardWithIf).parallel(vo);
        c.acc.compute_at(c.out, vi);
    };
    SpmmProgram p("sampled");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::max());
    Graph g = test::random_graph(78);
    const int F = 3;
    Tensor x = test::random_tensor({g.num_src(), F}, 1);
    Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32), out = Tensor::empty({g.num_dst(), F}, DType::F32);
    p.compile(F).run(g, {{"x", x}}, want);
    auto measured = dsl::measure_points(p, rows, {{{"split", 8}}}, F, Device::CPU, g, {{"x", x}}, out, {}, 2);
    ASSERT_EQ(measured.size(), 1u);
    EXPECT_EQ(measured[0].point.at("split"), 8);
    EXPECT_GT(measured[0].median_ms, 0.0);
    expect_close(out, want, 0, "split 8");
    try {
        dsl::measure_points(p, rows, {{{"split", 1}}, {{"split", 32}}}, F, Device::CPU, g, {{"x", x}}, out, {}, 1);
        FAIL() << "an invalid point was measured";
    } catch (const ScheduleError &e) {
        EXPECT_NE(std::string(e.what()).find("split 32 is refused here"), std::string::npos) << e.what();
    }
}

TEST(UserSpmm, ScheduleWritingOutsideTheOutputIsANamedErrorNotACrash) {
    // A user schedule that splits rows into tasks of 64 without a tail strategy: Halide shifts the
    // last task inwards, so a graph with fewer rows than a task would be read and written before
    // row 0. Halide's input checks refuse the call; the user gets a KernelError naming the program
    // and the access, the process goes on, and the same schedule with GuardWithIf runs.
    auto rows_of = [](Halide::TailStrategy tail) {
        dsl::ScheduleDef d;
        d.name = "tasks";
        d.knobs = {{"rows", {64}, 64}};
        d.apply = [tail](dsl::ScheduleContext &c) {
            Halide::Var vo("vo"), vi("vi");
            c.out.split(c.v, vo, vi, static_cast<int>(c.knob("rows")), tail).parallel(vo);
            c.acc.compute_at(c.out, vi);
        };
        return d;
    };
    SpmmProgram p("small_graph_sum");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::sum());
    test::RandomGraphOptions opt;
    opt.num_nodes = 5;
    opt.long_row = 3;
    Graph g = test::random_graph(5, opt);
    const int F = 4;
    Tensor x = test::random_tensor({g.num_src(), F}, 1);
    Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
    dsl::SpmmKernel shifted = p.compile(F, Device::CPU, rows_of(Halide::TailStrategy::ShiftInwards), {});
    EXPECT_TRUE(test::throws_with<KernelError>([&] { shifted.run(g, {{"x", x}}, out); },
                                               {"small_graph_sum", "is accessed at", "before the min"}));
    dsl::SpmmKernel guarded = p.compile(F, Device::CPU, rows_of(Halide::TailStrategy::GuardWithIf), {});
    guarded.run(g, {{"x", x}}, out);
    expect_close(out, reference(g, F, 0.0, [](double a, double m) { return a + m; },
                                [&](int f, int64_t u, int64_t, int64_t) {
                                    return static_cast<double>(x.data_as<float>()[u * F + f]);
                                }),
                 1e-6, "guarded");
}

/// base with its rows in order of in-degree: balanced_rows() before (first) or after the base's
/// directives.
dsl::ScheduleDef balanced(const dsl::ScheduleDef &base, bool first) {
    dsl::ScheduleDef d = base;
    d.name = base.name + "_balanced";
    d.apply = [apply = base.apply, first](dsl::ScheduleContext &c) {
        if (first) c.balanced_rows();
        apply(c);
        if (!first) c.balanced_rows();
    };
    return d;
}

/// A float tensor of `shape` holding `value` everywhere (results must overwrite it).
Tensor filled(std::vector<int64_t> shape, float value) {
    Tensor t = Tensor::empty(std::move(shape), DType::F32);
    std::fill(t.data_as<float>(), t.data_as<float>() + t.numel(), value);
    return t;
}

/// How many times `needle` occurs in `text`.
size_t occurrences(const std::string &text, const std::string &needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

TEST(UserSpmm, BalancedRowsGiveTheResultInTheGraphsRowOrder) {
    // Rows run in order of in-degree (bind_buffer over balancedIdx): a row's reduction is the same
    // in-order one, so every result equals the natural order's exactly, under the default CPU
    // schedule (tasks of rows, vectorized features) and the lanes form, with the directive called
    // before or after the others; destination operands are read for the row computed.
    SpmmProgram sum_p("balanced_sum"), max_p("balanced_max");
    for (SpmmProgram *p : {&sum_p, &max_p}) {
        Halide::Expr x = p->operand("x", At::Src);
        Halide::Expr w = p->operand("w", At::Edge, true);
        Halide::Expr d = p->operand("d", At::Dst, true);
        p->message(x * w + d);
        p->reduce(p == &sum_p ? Monoid::sum() : Monoid::max());
    }
    sum_p.finalize([](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast<float>(degree); });
    for (SpmmProgram *p : {&sum_p, &max_p}) {
        for (int F : {1, 7, 32}) {
            const dsl::SpmmKernel want_k = p->compile(F);
            std::vector<dsl::SpmmKernel> kernels = {
                p->compile(F, Device::CPU, balanced(dsl::default_schedule(), true)),
                p->compile(F, Device::CPU, balanced(dsl::default_schedule(), false),
                           {{"rows_per_task", 4}, {"vector_width", F >= 8 ? 8 : 1}}),
                p->compile(F, Device::CPU, balanced(lanes_schedule(), true), {{"lanes", 3}, {"steps", 3}}),
                p->compile(F, Device::CPU, balanced(lanes_schedule(), false), {{"lanes", 8}})};
            for (const dsl::SpmmKernel &k : kernels) {
                EXPECT_TRUE(k.orders_rows()) << k.schedule();
                EXPECT_FALSE(want_k.orders_rows());
                // The row order is an argument, read where the output rows are stored.
                const std::string stmt = k.lowered_stmt();
                EXPECT_NE(stmt.find("row_order["), std::string::npos) << stmt;
                const auto names = k.argument_names();
                ASSERT_GE(names.size(), 4u);
                EXPECT_EQ(names[3], "row_order");
            }
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(90 + F, c.opt);
                const std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                        {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                                                        {"d", test::random_tensor({g.num_dst(), 1}, 3)}};
                Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
                want_k.run(g, ops, want);
                for (const dsl::SpmmKernel &k : kernels) {
                    Tensor got = filled({g.num_dst(), F}, 7.f);
                    k.run(g, ops, got);
                    // The lanes merge their partial results in another association: equal up to rounding.
                    const bool lanes = k.schedule().find("cpu_lanes") != std::string::npos;
                    expect_close(got, want, lanes && p == &sum_p ? 1e-5 : 0,
                                 k.schedule() + " on " + c.name + " F=" + std::to_string(F));
                }
            }
        }
    }
}

TEST(UserSpmm, LocalityRowsGiveTheResultInTheGraphsRowOrder) {
    // Rows bound to the graph's locality order (ScheduleContext::locality_rows): the kernel is the
    // balanced form's, bound to Graph::locality_idx (made on the first run, kept with the graph);
    // every result equals the natural order's exactly.
    SpmmProgram p("locality_max");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true) + p.operand("d", At::Dst, true));
    p.reduce(Monoid::max());
    dsl::ScheduleDef locality = dsl::default_schedule();
    locality.name = "user_default_locality";
    locality.apply = [apply = dsl::default_schedule().apply](dsl::ScheduleContext &c) {
        c.locality_rows();
        apply(c);
    };
    for (int F : {1, 7}) {
        const dsl::SpmmKernel want_k = p.compile(F);
        const dsl::SpmmKernel k = p.compile(F, Device::CPU, locality, {{"rows_per_task", 4}});
        EXPECT_TRUE(k.orders_rows());
        EXPECT_TRUE(k.orders_rows_by_locality());
        EXPECT_FALSE(p.compile(F, Device::CPU, balanced(dsl::default_schedule(), true)).orders_rows_by_locality());
        EXPECT_EQ(k.argument_names()[3], "row_order");
        for (const Case &c : graphs()) {
            Graph g = test::random_graph(95 + F, c.opt);
            const std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                    {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                                                    {"d", test::random_tensor({g.num_dst(), 1}, 3)}};
            Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32), got = filled({g.num_dst(), F}, 7.f);
            want_k.run(g, ops, want);
            const auto before = g.attachment_keys();
            EXPECT_EQ(std::count(before.begin(), before.end(), "row_order/locality"), 0);
            k.run(g, ops, got);
            const auto after = g.attachment_keys();
            EXPECT_EQ(std::count(after.begin(), after.end(), "row_order/locality"), 1) << c.name;
            expect_close(got, want, 0, std::string("locality order on ") + c.name + " F=" + std::to_string(F));
        }
    }
    dsl::ScheduleDef with_segments;
    with_segments.name = "locality_segments";
    with_segments.apply = [](dsl::ScheduleContext &c) {
        c.locality_rows();
        c.split_rows(8);
    };
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, with_segments); },
                                                 {"locality_rows and split_rows do not go together"}));
}

TEST(UserSpmm, RelabeledSourcesMatchPlainLoops) {
    // relabel_sources: the kernel runs on the graph renumbered in its locality order, source
    // operands read through copies in the new order, destination operands, src() and dst() at the
    // graph's own ids, out's rows stored to their old ids. Under the default CPU schedule, rows
    // split into segments and a scatter by nonzeros, against plain loops (sums in another order:
    // equal to rounding); a bipartite graph is refused by name.
    SpmmProgram p("relabeled");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr s_u = p.operand("s", At::Src, true);
    Halide::Expr w = p.operand("w", At::Edge, true);
    Halide::Expr d = p.operand("d", At::Dst, true);
    p.message(x * w + s_u + d + Halide::select(p.src() < p.dst(), 1.f, 0.f));
    p.reduce(Monoid::sum());
    auto relabeled = [](dsl::ScheduleDef base, std::function<void(dsl::ScheduleContext &)> more = nullptr) {
        base.name = "relabeled_" + base.name;
        base.apply = [apply = base.apply, more](dsl::ScheduleContext &c) {
            const dsl::RelabeledSources r = c.relabel_sources();
            EXPECT_EQ(r.sources.size(), 2u);
            for (Halide::Func copy : r.sources) copy.compute_root();
            if (more) more(c);
            else apply(c);
        };
        return base;
    };
    const int F = 3;
    std::vector<dsl::SpmmKernel> kernels = {
        p.compile(F, Device::CPU, relabeled(dsl::default_schedule())),
        p.compile(F, Device::CPU, relabeled(dsl::default_schedule(), [](dsl::ScheduleContext &c) { c.split_rows(3); })),
        p.compile(F, Device::CPU, relabeled(dsl::default_schedule(), [](dsl::ScheduleContext &c) { c.scatter_nonzeros(); }))};
    for (const dsl::SpmmKernel &k : kernels) {
        EXPECT_TRUE(k.relabels_sources());
        EXPECT_EQ(k.argument_names()[3], "src_order");
        // The gathers read the copies in the new order (computed at root), not x through the order.
        const std::string stmt = k.lowered_stmt();
        EXPECT_NE(stmt.find("produce relabeled_x_relabeled"), std::string::npos) << stmt;
        EXPECT_NE(stmt.find("produce relabeled_s_relabeled"), std::string::npos) << stmt;
    }
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(61, c.opt);
        const std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                {"s", test::random_tensor({g.num_src(), 1}, 2)},
                                                {"w", test::random_tensor({g.num_edges(), 1}, 3)},
                                                {"d", test::random_tensor({g.num_dst(), 1}, 4)}};
        if (g.num_src() != g.num_dst()) {
            Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
            EXPECT_TRUE(test::throws_with<GraphError>([&] { kernels[0].run(g, ops, out); },
                                                      {"relabels its sources", "square graphs"}));
            continue;
        }
        const CSR &csr = g.csr();
        const float *xs = ops.at("x").data_as<float>(), *ss = ops.at("s").data_as<float>(),
                    *ws = ops.at("w").data_as<float>(), *ds = ops.at("d").data_as<float>();
        Tensor want = Tensor::zeros({g.num_dst(), F}, DType::F32);
        for (int64_t v = 0; v < csr.num_rows; ++v)
            for (int f = 0; f < F; ++f) {
                double acc = 0;
                for (int64_t q = csr.row_ptr[v]; q < csr.row_ptr[v + 1]; ++q) {
                    const int64_t u = csr.col_idx[q];
                    acc += double(xs[u * F + f]) * ws[csr.edge_id(q)] + ss[u] + ds[v] + (u < v ? 1.0 : 0.0);
                }
                want.data_as<float>()[v * F + f] = static_cast<float>(acc);
            }
        for (const dsl::SpmmKernel &k : kernels) {
            Tensor got = filled({g.num_dst(), F}, 7.f);
            k.run(g, ops, got);
            expect_close(got, want, 1e-5, k.schedule() + " on " + c.name);
        }
        // It ran on the relabeled graph, whose numbering is not the graph's own.
        const auto keys = g.attachment_keys();
        EXPECT_EQ(std::count(keys.begin(), keys.end(), "relabeled/locality"), 1) << c.name;
        std::vector<index_t> identity(static_cast<size_t>(g.num_dst()));
        std::iota(identity.begin(), identity.end(), 0);
        EXPECT_NE(g.locality_idx(), identity) << c.name;
    }
    // On CUDA (PTX): the copy of each source operand is a kernel before the rows'.
    const std::string ptx = p.compile(8, Device::CUDA, test::cuda_relabeled_schedule()).assembly();
    EXPECT_GE(test::count_of(ptx, ".entry"), 3u) << ptx;  // two copies (x, s), the rows
    // Errors: after another form, with an order of rows, a monoid that does not merge, tails.
    auto with = [](std::function<void(dsl::ScheduleContext &)> apply) {
        dsl::ScheduleDef def;
        def.name = "custom";
        def.apply = std::move(apply);
        return def;
    };
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(F, Device::CPU, with([](dsl::ScheduleContext &c) {
                                                       c.split_rows(4);
                                                       c.relabel_sources();
                                                   })); },
                                                 {"relabel_sources: call it first"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(F, Device::CPU, with([](dsl::ScheduleContext &c) {
                                                       c.relabel_sources();
                                                       c.locality_rows();
                                                   })); },
                                                 {"relabel_sources and locality_rows do not go together"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(F, Device::CPU, with([](dsl::ScheduleContext &c) {
                                                       c.relabel_sources();
                                                       c.split_row_tails(4);
                                                   })); },
                                                 {"split_row_tails", "relabels its sources"}));
    SpmmProgram ordered("relabel_ordered");
    ordered.message(ordered.operand("x", At::Src));
    ordered.reduce(Monoid{"first", [](Halide::Type t) { return Halide::Internal::make_zero(t); },
                          [](Halide::Expr a, Halide::Expr m) { return Halide::select(a == 0, m, a); }});
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { ordered.compile(F, Device::CPU, with([](dsl::ScheduleContext &c) { c.relabel_sources(); })); },
        {"relabel_sources", "declares no merge"}));
}

TEST(UserSpmm, BalancedRowsOnViewsReadTheViewsRowOrder) {
    // A view carries its row order (GraphView::row_order); without one, a program that orders rows
    // is a GraphError naming what is missing. Any permutation gives the same result.
    SpmmProgram p("balanced_view");
    p.message(p.operand("x", At::Src) + p.operand("d", At::Dst, true));
    p.reduce(Monoid::sum());
    const int F = 5;
    Graph g = test::random_graph(33, graphs()[0].opt);
    const CSR &csr = g.csr();
    const std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)},
                                            {"d", test::random_tensor({g.num_dst(), 1}, 2)}};
    Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
    p.compile(F).run(g, ops, want);
    const dsl::SpmmKernel k = p.compile(F, Device::CPU, balanced(dsl::default_schedule(), true));
    GraphView v;
    v.num_src = g.num_src(), v.num_dst = g.num_dst(), v.num_edges = g.num_edges();
    v.row_ptr = csr.row_ptr.data(), v.row_ptr_len = static_cast<int64_t>(csr.row_ptr.size());
    v.col_idx = csr.col_idx.data();
    v.edge_ids = csr.identity_edge_ids() ? nullptr : csr.edge_ids.data();
    v.max_degree = g.max_row_length();
    Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
    EXPECT_TRUE(test::throws_with<GraphError>([&] { k.run(v, ops, out); }, {"balanced_view", "GraphView::row_order"}));
    std::vector<index_t> reversed(static_cast<size_t>(g.num_dst()));
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    for (const std::vector<index_t> *order : std::vector<const std::vector<index_t> *>{&g.balanced_idx(), &reversed}) {
        v.row_order = order->data();
        Tensor got = filled({g.num_dst(), F}, 7.f);
        k.run(v, ops, got);
        expect_close(got, want, 0, order == &reversed ? "reversed order" : "balancedIdx");
    }
}

TEST(UserSpmm, CudaBalancedRowsLoadTheOrderInTheKernel) {
    // On CUDA, both forms of the default schedule (threads over rows; a block a row with lanes of
    // nonzeros) read row_order in the kernel: the row each block or thread computes, and the row
    // its stores go to.
    SpmmProgram p("balanced_cuda");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(Monoid::sum());
    for (int64_t lanes : {1, 8}) {
        dsl::SpmmKernel k = p.compile(64, Device::CUDA, balanced(dsl::default_schedule(), lanes == 1),
                                      {{"nnz_lanes", lanes}});
        EXPECT_TRUE(k.orders_rows());
        const std::string ptx = k.assembly();
        EXPECT_EQ(occurrences(ptx, ".entry"), 1u) << k.schedule();
        EXPECT_NE(ptx.find("row_order"), std::string::npos) << k.schedule() << "\n" << ptx;
        // The host side checks the order covers the output's rows.
        const std::string stmt = k.lowered_stmt();
        EXPECT_NE(stmt.find("\"Input buffer row_order\""), std::string::npos) << stmt;
    }
}

TEST(UserSpmm, GraphViewsRunLikeTheGraph) {
    // The index arrays in caller memory (as mini-batch blocks hold them): positions as edge ids
    // (null edge_ids) and shuffled edge ids, against the same program on the Graph.
    SpmmProgram p("viewed");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    Halide::Expr d = p.operand("d", At::Dst, true);
    p.message(x * w + d);
    p.reduce(Monoid::max());
    const int F = 5;
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(31, c.opt);
        const CSR &csr = g.csr();
        Tensor x_t = test::random_tensor({g.num_src(), F}, 1), w_t = test::random_tensor({g.num_edges(), 1}, 2);
        Tensor d_t = test::random_tensor({g.num_dst(), 1}, 3);
        const std::map<std::string, Tensor> ops{{"x", x_t}, {"w", w_t}, {"d", d_t}};
        dsl::SpmmKernel k = p.compile(F);
        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32), got = Tensor::empty({g.num_dst(), F}, DType::F32);
        k.run(g, ops, want);
        GraphView v;
        v.num_src = g.num_src(), v.num_dst = g.num_dst(), v.num_edges = g.num_edges();
        v.row_ptr = csr.row_ptr.data(), v.row_ptr_len = static_cast<int64_t>(csr.row_ptr.size());
        static const index_t kNone = 0;
        v.col_idx = csr.nnz() ? csr.col_idx.data() : &kNone;
        v.edge_ids = csr.identity_edge_ids() ? nullptr : csr.edge_ids.data();
        v.max_degree = g.max_row_length();
        k.run(v, ops, got);
        expect_close(got, want, 0, std::string("view of ") + c.name);
    }
    // A view whose arrays are on another device, or too short a row_ptr, is a GraphError.
    Graph g = test::random_graph(32);
    GraphView v;
    v.device = Device::CUDA, v.num_src = g.num_src(), v.num_dst = g.num_dst(), v.num_edges = g.num_edges();
    v.row_ptr = g.csr().row_ptr.data(), v.row_ptr_len = static_cast<int64_t>(g.csr().row_ptr.size());
    v.col_idx = g.csr().col_idx.data();
    Tensor x_t = test::random_tensor({g.num_src(), F}, 1), w_t = test::random_tensor({g.num_edges(), 1}, 2);
    Tensor d_t = test::random_tensor({g.num_dst(), 1}, 3), out = Tensor::empty({g.num_dst(), F}, DType::F32);
    const std::map<std::string, Tensor> ops{{"x", x_t}, {"w", w_t}, {"d", d_t}};
    EXPECT_THROW(p.compile(F).run(v, ops, out), GraphError);
    v.device = Device::CPU;
    v.row_ptr_len = g.num_dst();  // one short
    EXPECT_TRUE(test::throws_with<GraphError>([&] { p.compile(F).run(v, ops, out); }, {"row_ptr has"}));
}

TEST(UserSpmm, CudaLanesMergeThroughWarpShuffles) {
    // lane_merge = 2: the lanes of nonzeros on gpu_lanes, merged through warp shuffles (32-bit
    // indexing) instead of shared memory and a barrier, for single values and a monoid over tuples.
    SpmmProgram programs[] = {SpmmProgram("shfl_sum"), gsparse_examples::gat_attention("shfl_gat")};
    SpmmProgram &sum_p = programs[0];
    sum_p.message(sum_p.operand("x", At::Src) * sum_p.operand("w", At::Edge, true));
    sum_p.reduce(Monoid::sum());
    for (const SpmmProgram &p : programs) {
        for (int64_t L : {8, 32}) {
            dsl::SpmmKernel k = p.compile(64, Device::CUDA, dsl::default_schedule(),
                                          {{"nnz_lanes", L}, {"lane_merge", 2}, {"feature_vector", 1},
                                           {"balanced_rows", L == 32 ? 1 : 0}});
            const std::string ptx = k.assembly();
            EXPECT_EQ(occurrences(ptx, ".entry"), 1u) << k.schedule();
            EXPECT_GE(occurrences(ptx, "shfl.sync"), static_cast<size_t>(L - 1)) << k.schedule();
            EXPECT_EQ(ptx.find("bar.sync"), std::string::npos) << k.schedule();
            EXPECT_EQ(ptx.find(".shared"), std::string::npos) << k.schedule();
        }
    }
    // lane_merge = 0 picks shuffles below 8 features, shared memory from 8 up and for 64-bit types.
    auto merges_by_shuffles = [](const dsl::SpmmKernel &k) {
        const std::string ptx = k.assembly();
        const bool shuffles = ptx.find("shfl.sync") != std::string::npos;
        EXPECT_NE(shuffles, ptx.find("bar.sync") != std::string::npos) << k.schedule();
        return shuffles;
    };
    EXPECT_TRUE(merges_by_shuffles(sum_p.compile(4, Device::CUDA)));
    EXPECT_TRUE(merges_by_shuffles(sum_p.compile(7, Device::CUDA)));
    EXPECT_FALSE(merges_by_shuffles(sum_p.compile(8, Device::CUDA)));
    EXPECT_FALSE(merges_by_shuffles(sum_p.compile(4, Device::CUDA, dsl::default_schedule(), {{"lane_merge", 1}})));
    EXPECT_FALSE(merges_by_shuffles(sum_p.compile(4, Device::CUDA, dsl::default_schedule(), {{"feature_vector", 2}})));
    // The rule: shuffles need the lanes form and one feature a thread, on CUDA, of 32-bit types.
    const dsl::ScheduleDef &d = dsl::default_schedule();
    auto expect_error = [&](const SpmmProgram &p, const std::map<std::string, int64_t> &point, Device dev,
                            const std::string &needle) {
        EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(64, dev, d, point); }, {needle}))
            << dsl::point_str(d, point);
    };
    expect_error(sum_p, {{"lane_merge", 2}, {"feature_vector", 4}}, Device::CUDA, "one feature a thread");
    expect_error(sum_p, {{"lane_merge", 2}, {"nnz_lanes", 1}}, Device::CUDA, "apply to nnz_lanes > 1");
    expect_error(sum_p, {{"lane_merge", 1}}, Device::CPU, "CUDA knobs");
    SpmmProgram wide("shfl_f64", Halide::Float(64));
    wide.message(wide.operand("x", At::Src));
    wide.reduce(Monoid::sum());
    expect_error(wide, {{"lane_merge", 2}, {"feature_vector", 1}}, Device::CUDA, "warp shuffles move 32 bits");
    EXPECT_FALSE(merges_by_shuffles(wide.compile(4, Device::CUDA)));
}

TEST(UserSpmm, ForGraphRunsThePointTheScheduleChoosesForEachGraph) {
    // A schedule whose point depends on the graph (ScheduleDef::for_graph): rows in tasks of 8 where
    // some row is long, one task per row otherwise. One kernel runs both points, each compiled
    // once, with the same results; a point the rule refuses is a ScheduleError at the run.
    dsl::ScheduleDef by_graph;
    by_graph.name = "by_graph";
    by_graph.knobs = {{"split", {1, 8, 3}, 1}};
    by_graph.apply = [](dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("split")), Halide::TailStrategy::GuardWithIf).parallel(vo);
        c.acc.compute_at(c.out, vi);
    };
    by_graph.why_invalid = [](const std::map<std::string, int64_t> &p, int, Device) -> std::string {
        return p.at("split") == 3 ? "split 3 is refused" : "";
    };
    int64_t asked = 0;
    by_graph.for_graph = [&asked](const std::map<std::string, int64_t> &p, const dsl::RunShape &r) {
        ++asked;
        EXPECT_EQ(r.device, Device::CPU);
        EXPECT_EQ(r.features, 5);
        EXPECT_TRUE(r.monoid_merges);
        std::map<std::string, int64_t> q = p;
        q["split"] = r.max_degree > 100 ? 8 : 1;
        return q;
    };
    SpmmProgram p("by_graph_sum");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::sum());
    const int F = 5;
    const dsl::SpmmKernel k = p.compile(F, Device::CPU, by_graph);
    EXPECT_EQ(k.schedule(), "by_graph{split=1}");
    test::RandomGraphOptions short_rows;
    short_rows.long_row = 20;
    for (const auto &[opt, want_point] : {std::pair{short_rows, "by_graph{split=1}"},
                                          std::pair{graphs()[0].opt, "by_graph{split=8}"}}) {
        Graph g = test::random_graph(41, opt);
        EXPECT_EQ(k.schedule(g), want_point);
        const std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)}};
        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32), got = filled({g.num_dst(), F}, 7.f);
        p.compile(F).run(g, ops, want);
        k.run(g, ops, got);
        expect_close(got, want, 0, want_point);
    }
    EXPECT_GE(asked, 4);
    // A rule that picks a point the validity rule refuses: the run (here on a view) names it.
    Graph g = test::random_graph(42);
    GraphView v;
    v.num_src = g.num_src(), v.num_dst = g.num_dst(), v.num_edges = g.num_edges();
    v.row_ptr = g.csr().row_ptr.data(), v.row_ptr_len = static_cast<int64_t>(g.csr().row_ptr.size());
    v.col_idx = g.csr().col_idx.data();
    v.edge_ids = g.csr().identity_edge_ids() ? nullptr : g.csr().edge_ids.data();
    by_graph.for_graph = [](const std::map<std::string, int64_t> &p, const dsl::RunShape &) {
        std::map<std::string, int64_t> q = p;
        q["split"] = 3;
        return q;
    };
    const dsl::SpmmKernel refused = p.compile(F, Device::CPU, by_graph);
    Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { refused.run(v, {{"x", test::random_tensor({g.num_src(), F}, 1)}}, out); }, {"split 3 is refused"}));
}

TEST(UserSpmm, CudaDefaultRunsAThreadPerRowWhereEveryRowIsShort) {
    // The default schedule's nnz_lanes = 0: lanes of nonzeros for monoids that merge, but a thread
    // per row and feature on graphs whose longest row has at most kRowsFormMaxDegree neighbours
    // (and always for monoids that do not merge, and for explicit nnz_lanes).
    SpmmProgram p("rows_or_lanes");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::sum());
    const dsl::SpmmKernel k = p.compile(16, Device::CUDA);
    test::RandomGraphOptions short_rows;
    short_rows.long_row = dsl::kRowsFormMaxDegree;
    short_rows.avg_degree = 3;
    Graph regular = test::random_graph(43, short_rows), skewed = test::random_graph(44, graphs()[0].opt);
    ASSERT_LE(regular.max_row_length(), dsl::kRowsFormMaxDegree);
    ASSERT_GT(skewed.max_row_length(), dsl::kRowsFormMaxDegree);
    EXPECT_NE(k.schedule(regular).find("nnz_lanes=1"), std::string::npos) << k.schedule(regular);
    EXPECT_EQ(k.schedule(skewed), k.schedule());
    EXPECT_NE(k.schedule().find("nnz_lanes=0"), std::string::npos);
    const dsl::SpmmKernel fixed = p.compile(16, Device::CUDA, dsl::default_schedule(), {{"nnz_lanes", 8}});
    EXPECT_EQ(fixed.schedule(regular), fixed.schedule());
    SpmmProgram custom("rows_or_lanes_custom");
    custom.message(custom.operand("x", At::Src));
    Monoid no_merge = Monoid::sum();
    no_merge.name = "sum_in_order";
    no_merge.merge = nullptr;
    custom.reduce(no_merge);
    const dsl::SpmmKernel in_order = custom.compile(16, Device::CUDA);
    EXPECT_EQ(in_order.schedule(regular), in_order.schedule());
    // On the CPU there is one form.
    const dsl::SpmmKernel cpu = p.compile(16);
    EXPECT_EQ(cpu.schedule(regular), cpu.schedule());
}

TEST(UserSpmm, Int32IndexingRefusesBuffersOf2To31Elements) {
    // A kernel compiled with 32-bit indexing names the operand that is too large for it before it
    // reads anything (the tensors here are views of a few bytes with a large shape).
    dsl::ScheduleDef narrow;
    narrow.name = "narrow";
    narrow.apply = [](dsl::ScheduleContext &c) {
        c.int32_indexing();
        c.acc.compute_at(c.out, c.v);
    };
    SpmmProgram p("narrow_sum");
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::sum());
    const int F = 1024;
    const int64_t n = int64_t(1) << 21;  // n x F = 2^31 elements
    Graph g = Graph::from_edges(n, std::vector<index_t>{0, 1}, std::vector<index_t>{1, 2});
    float dummy[4] = {};
    Tensor x = Tensor::wrap(dummy, {n, F}, DType::F32), out = Tensor::wrap(dummy, {n, F}, DType::F32);
    dsl::SpmmKernel k = p.compile(F, Device::CPU, narrow);
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { k.run(g, {{"x", x}}, out); },
                                              {"narrow_sum", "32-bit indexing", "operand x", "2147483648"}));
}

}  // namespace
}  // namespace gsparse
