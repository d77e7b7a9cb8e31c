// User programs whose schedules divide the work by nonzeros (dsl::ScheduleContext::scatter_nonzeros,
// accumulate_runs): the example schedule nonzero_scatter (CPU) against plain C++ loops on random
// graphs (empty rows, a very long row, duplicate edges, self-loops, shuffled and identity edge ids,
// bipartite, mostly empty), sum (out is the accumulator), max and mean (an output stage of their
// own), an edge operand and a destination operand, F = 1, odd F and F = 32, runs of 1 to 64; the
// register runs in the lowered statement; errors; the CUDA kernel (PTX: atomic adds for sums, a
// compare-and-swap for max); the static library's arguments.
#include <gtest/gtest.h>

#include <cmath>

#include "dsl/user_spmm.h"
#include "support/compare.h"
#include "support/graph_view_of.h"
#include "support/random_graph.h"
#include "support/text_count.h"
#include "support/throws_with.h"
#include "support/user_program_cases.h"
#include "user_plugin/gat_attention.h"
#include "user_plugin/nonzero_scatter.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Monoid;
using dsl::SpmmProgram;
using test::Case;
using test::expect_close;
using test::graphs;

enum class Reduce { Sum, Max, Mean };

/// x_u * w_e + y_v reduced by sum, max or mean (sum and finalize acc / degree).
SpmmProgram weighted(const std::string &name, Reduce r) {
    SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    Halide::Expr y = p.operand("y", At::Dst);
    p.message(x * w + y);
    p.reduce(r == Reduce::Max ? Monoid::max() : Monoid::sum());
    if (r == Reduce::Mean)
        p.finalize([](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast<float>(degree); });
    return p;
}

/// A tensor of `value` everywhere (so that an element the kernel leaves unwritten shows).
Tensor filled(std::vector<int64_t> shape, float value) {
    Tensor t = Tensor::empty(std::move(shape), DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = value;
    return t;
}

/// The same as plain loops over the CSR.
Tensor weighted_reference(const Graph &g, int F, const Tensor &x, const Tensor &w, const Tensor &y, Reduce r) {
    const CSR &csr = g.csr();
    Tensor out = Tensor::zeros({csr.num_rows, F}, DType::F32);
    for (int64_t v = 0; v < csr.num_rows; ++v) {
        const int64_t degree = csr.row_length(v);
        if (degree == 0) continue;
        for (int f = 0; f < F; ++f) {
            double acc = r == Reduce::Max ? -INFINITY : 0.0;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p) {
                const double m = double(x.data_as<float>()[csr.col_idx[p] * F + f]) * w.data_as<float>()[csr.edge_id(p)] +
                                 double(y.data_as<float>()[v * F + f]);
                acc = r == Reduce::Max ? std::max(acc, m) : acc + m;
            }
            if (r == Reduce::Mean) acc /= double(degree);
            out.data_as<float>()[v * F + f] = static_cast<float>(acc);
        }
    }
    return out;
}

const char *name_of(Reduce r) { return r == Reduce::Sum ? "sum" : r == Reduce::Max ? "max" : "mean"; }

TEST(UserNonzeroScatter, ScatteredNonzerosMatchPlainLoops) {
    // Tasks of 1 x 64 to 64 x 64 positions: rows cross task boundaries, the long row (400
    // neighbours) spans several tasks, and tasks hold many short rows. Sum at F = 1, 5 and 32; max
    // and mean at F = 5.
    const std::vector<std::pair<Reduce, int>> cases = {
        {Reduce::Sum, 1}, {Reduce::Sum, 5}, {Reduce::Sum, 32}, {Reduce::Max, 5}, {Reduce::Mean, 5}};
    for (const auto &[r, F] : cases) {
        SpmmProgram p = weighted(std::string("scatter_") + name_of(r), r);
        std::vector<dsl::SpmmKernel> kernels;
        for (int64_t run : {1, 8, 64}) {
            kernels.push_back(p.compile(F, Device::CPU, gsparse_examples::nonzero_scatter(), {{"run", run}, {"task_runs", 64}}));
            EXPECT_TRUE(kernels.back().scatters_nonzeros());
        }
        for (const Case &c : graphs()) {
            Graph g = test::random_graph(40 + F, c.opt);
            Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                   y = test::random_tensor({g.num_dst(), F}, 3);
            const Tensor want = weighted_reference(g, F, x, w, y, r);
            for (const dsl::SpmmKernel &k : kernels) {
                Tensor got = filled({g.num_dst(), F}, 7.0f);  // every element written
                k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                expect_close(got, want, 1e-4, std::string(c.name) + " " + name_of(r) + " F=" + std::to_string(F) + " " +
                                                  k.schedule());
            }
        }
    }
}

TEST(UserNonzeroScatter, TheWarpFormVisitsEveryPositionOnce) {
    // scatter_nonzeros(S): positions as 32 lanes x S steps x chunks, lanes past the last position
    // combining the identity; on the CPU under a schedule of its own (chunks in parallel, the lanes
    // and steps serial) against plain loops, sum and max, S = 1, 3 and 8, F = 1 and 5.
    for (const Reduce r : {Reduce::Sum, Reduce::Max})
        for (const int S : {1, 3, 8})
            for (const int F : {1, 5}) {
                dsl::ScheduleDef warps;
                warps.name = "warps";
                int steps_seen = 0;
                warps.apply = [S, &steps_seen](dsl::ScheduleContext &c) {
                    const dsl::NonzeroScatter s = c.scatter_nonzeros(S);
                    steps_seen = s.steps;
                    c.acc.update().reorder(c.f, s.lane, s.step, s.chunk).parallel(s.chunk);
                };
                dsl::SpmmKernel k = weighted("warp_form", r).compile(F, Device::CPU, warps);
                EXPECT_EQ(steps_seen, S);
                for (const Case &c : graphs()) {
                    Graph g = test::random_graph(60 + S + F, c.opt);
                    Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                           y = test::random_tensor({g.num_dst(), F}, 3), got = filled({g.num_dst(), F}, 7.0f);
                    k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                    expect_close(got, weighted_reference(g, F, x, w, y, r), 1e-4,
                                 std::string(c.name) + " " + name_of(r) + " S=" + std::to_string(S) + " F=" + std::to_string(F));
                }
            }
}

TEST(UserNonzeroScatter, GraphsWithoutEdgesAndOneEdge) {
    SpmmProgram p = weighted("scatter_small", Reduce::Max);
    dsl::SpmmKernel k = p.compile(3, Device::CPU, gsparse_examples::nonzero_scatter());
    for (const Graph &g : {Graph::from_edges(4, {}, {}), Graph::from_edges(4, {2}, {1})}) {
        Tensor x = test::random_tensor({g.num_src(), 3}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
               y = test::random_tensor({g.num_dst(), 3}, 3), got = filled({g.num_dst(), 3}, 7.0f);
        k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
        expect_close(got, weighted_reference(g, 3, x, w, y, Reduce::Max), 1e-6,
                     std::to_string(g.num_edges()) + " edges");
    }
}

TEST(UserNonzeroScatter, SumsAccumulateRunsInRegistersAndOutIsTheAccumulator) {
    // A sum without finalize scatters into the output itself; its run loop keeps a register pair
    // per copy of the loop (AccumulateAtomicRuns). Max has an output stage of its own and no
    // register runs (its updates are not adds).
    auto stmt_of = [](Reduce r) {
        return weighted(std::string("runs_") + name_of(r), r)
            .compile(4, Device::CPU, gsparse_examples::nonzero_scatter())
            .lowered_stmt();
    };
    bool out_is_acc_sum = false, out_is_acc_max = true;
    for (const Reduce r : {Reduce::Sum, Reduce::Max}) {
        dsl::ScheduleDef def;
        def.name = "probe";
        def.apply = [&, r](dsl::ScheduleContext &c) {
            const dsl::NonzeroScatter s = c.scatter_nonzeros();
            (r == Reduce::Sum ? out_is_acc_sum : out_is_acc_max) = s.out_is_acc;
            EXPECT_EQ(c.acc.name() == c.out.name(), s.out_is_acc);
        };
        weighted(std::string("probe_") + name_of(r), r).compile(4, Device::CPU, def);
    }
    EXPECT_TRUE(out_is_acc_sum);
    EXPECT_FALSE(out_is_acc_max);
    const std::string sum = stmt_of(Reduce::Sum), max = stmt_of(Reduce::Max);
    EXPECT_GE(test::count_of(sum, "allocate run_index"), 1u) << sum;
    EXPECT_GE(test::count_of(sum, "atomic"), 2u) << sum;
    EXPECT_EQ(test::count_of(max, "allocate run_index"), 0u) << max;
    EXPECT_GE(test::count_of(max, "atomic"), 1u) << max;
    EXPECT_NE(max.find("produce runs_max_acc"), std::string::npos) << max;
}

TEST(UserNonzeroScatter, CustomMonoidsScatterByTheirCombine) {
    // A monoid of the user's own (a single value, declared mergeable) that reads the accumulator
    // once: a leaky sum, acc + (x > 0 ? x : x / 2), combined in whatever order the atomic updates
    // run, against the same program reduced by rows. A combine that reads it twice (log-sum-exp:
    // max and min of acc and x) would need a lock: refused.
    auto program = [](const std::string &name, bool twice) {
        SpmmProgram p(name);
        p.message(p.operand("x", At::Src));
        Monoid m;
        m.name = twice ? "logsumexp" : "leaky_sum";
        m.identity = [twice](Halide::Type t) { return twice ? t.min() : Halide::Internal::make_zero(t); };
        if (twice) {
            m.combine = [](Halide::Expr a, Halide::Expr b) {
                Halide::Expr hi = Halide::max(a, b), lo = Halide::min(a, b);
                return hi + Halide::log(1.0f + Halide::exp(lo - hi));
            };
            m.merge = m.combine;
        } else {
            m.combine = [](Halide::Expr a, Halide::Expr x) { return a + Halide::select(x > 0, x, x / 2); };
            m.merge = [](Halide::Expr a, Halide::Expr b) { return a + b; };
        }
        p.reduce(m);
        return p;
    };
    const int F = 3;
    dsl::SpmmKernel in_rows = program("leaky_rows", false).compile(F),
                    scattered = program("leaky", false).compile(F, Device::CPU, gsparse_examples::nonzero_scatter());
    for (const Case &c : graphs()) {
        Graph g = test::random_graph(5, c.opt);
        Tensor xs = test::random_tensor({g.num_src(), F}, 1), want = Tensor::empty({g.num_dst(), F}, DType::F32),
               got = Tensor::empty({g.num_dst(), F}, DType::F32);
        in_rows.run(g, {{"x", xs}}, want);
        scattered.run(g, {{"x", xs}}, got);
        expect_close(got, want, 1e-4, std::string("leaky sum ") + c.name);
    }
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { program("lse", true).compile(F, Device::CPU, gsparse_examples::nonzero_scatter()); },
        {"monoid 'logsumexp'", "reads the accumulator 3 times in its combine"}));
}

TEST(UserNonzeroScatter, ScatterErrorsNameTheReason) {
    SpmmProgram p = weighted("errors", Reduce::Sum);
    auto with = [](std::function<void(dsl::ScheduleContext &)> apply) {
        dsl::ScheduleDef d;
        d.name = "broken";
        d.apply = std::move(apply);
        return d;
    };
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) {
                  c.scatter_nonzeros();
                  c.scatter_nonzeros();
              })); },
        {"scatter_nonzeros", "already split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) {
                  c.split_rows(16);
                  c.scatter_nonzeros();
              })); },
        {"scatter_nonzeros", "already split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) {
                  c.scatter_nonzeros();
                  Halide::Var vo("vo");
                  c.stage_neighbours(8, vo, 4);
              })); },
        {"stage_neighbours", "scatter_nonzeros"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) {
                  c.balanced_rows();
                  c.scatter_nonzeros();
              })); },
        {"balanced_rows and scatter_nonzeros do not go together"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) { c.accumulate_runs(c.k); })); },
        {"accumulate_runs: call scatter_nonzeros first"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) {
                  c.scatter_nonzeros();
                  c.accumulate_lanes(c.k);
              })); },
        {"accumulate_lanes: call scatter_nonzeros(warp_steps) first"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, with([](dsl::ScheduleContext &c) { c.scatter_nonzeros(65); })); },
        {"65 warp steps is not in 0..64"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(16, Device::CUDA, gsparse_examples::nonzero_scatter(), {{"warp_steps", 4}}); },
        {"warp_steps takes up to 8 features"}));
    // A monoid without a merge (its order matters) and one over tuples (atomics move one value).
    SpmmProgram ordered("ordered");
    ordered.message(ordered.operand("x", At::Src));
    Monoid last;
    last.name = "last";
    last.identity = [](Halide::Type t) { return Halide::Internal::make_zero(t); };
    last.combine = [](Halide::Expr, Halide::Expr x) { return x; };
    ordered.reduce(last);
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { ordered.compile(4, Device::CPU, gsparse_examples::nonzero_scatter()); },
        {"scatter_nonzeros", "declares no merge"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { gsparse_examples::gat_attention("tuples", true).compile(4, Device::CPU, gsparse_examples::nonzero_scatter()); },
        {"scatter_nonzeros", "accumulates a tuple"}));
    // Points outside the example's rule.
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, gsparse_examples::nonzero_scatter(), {{"feature_threads", 4}}); },
        {"feature_threads, block and warp_steps are CUDA knobs"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CUDA, gsparse_examples::nonzero_scatter(), {{"feature_threads", 8}}); },
        {"exceeds the feature count"}));
    // A graph view has no row of every position.
    Graph g = test::random_graph(3, graphs()[0].opt);
    test::HostView h = test::view_of(g);
    Tensor x = test::random_tensor({g.num_src(), 4}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
           y = test::random_tensor({g.num_dst(), 4}, 3), got = Tensor::empty({g.num_dst(), 4}, DType::F32);
    dsl::SpmmKernel k = p.compile(4, Device::CPU, gsparse_examples::nonzero_scatter());
    EXPECT_TRUE(test::throws_with<GraphError>([&] { k.run(h.view, {{"x", x}, {"w", w}, {"y", y}}, got); },
                                              {"reduces by nonzeros", "graph view"}));
}

TEST(UserNonzeroScatter, CudaKernelAddsAtomicallyAndTakesTheRowOfEveryPosition) {
    // PTX (no GPU needed): a sum's scatter is atomic adds (AtomicAddStores gives the store and its
    // load one index), not a compare-and-swap loop; max's is a compare-and-swap loop.
    const std::map<std::string, int64_t> point = {{"run", 16}, {"feature_threads", 8}};
    const std::string sum = weighted("scatter_cuda_sum", Reduce::Sum)
                                .compile(16, Device::CUDA, gsparse_examples::nonzero_scatter(), point)
                                .assembly();
    EXPECT_TRUE(sum.find("red.global.add.f32") != std::string::npos || sum.find("atom.global.add.f32") != std::string::npos)
        << sum;
    EXPECT_EQ(sum.find("atom.global.cas"), std::string::npos) << sum;
    const std::string max = weighted("scatter_cuda_max", Reduce::Max)
                                .compile(16, Device::CUDA, gsparse_examples::nonzero_scatter(), point)
                                .assembly();
    EXPECT_NE(max.find("atom.global.cas"), std::string::npos) << max;
    // The warp form at F = 1 and 4: the lanes of a step combine through shuffles before an add.
    for (const int F : {1, 4}) {
        const std::string warp = weighted("scatter_cuda_warp", Reduce::Sum)
                                     .compile(F, Device::CUDA, gsparse_examples::nonzero_scatter(), {{"warp_steps", 8}})
                                     .assembly();
        EXPECT_NE(warp.find("shfl.sync"), std::string::npos) << "F=" << F << "\n" << warp;
        EXPECT_TRUE(warp.find("red.global.add.f32") != std::string::npos ||
                    warp.find("atom.global.add.f32") != std::string::npos)
            << warp;
        EXPECT_EQ(warp.find("atom.global.cas"), std::string::npos) << warp;
    }
    const std::vector<std::string> args =
        weighted("scatter_args", Reduce::Sum).compile(16, Device::CUDA, gsparse_examples::nonzero_scatter()).argument_names();
    const std::vector<std::string> want = {"row_ptr", "col_idx", "edge_ids", "pos_row", "scatter_args_x", "scatter_args_w", "scatter_args_y",
                                           "max_degree", "num_edges", "num_src", "scatter_args_out"};
    EXPECT_EQ(args, want);
}

}  // namespace
}  // namespace gsparse
