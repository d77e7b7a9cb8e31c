// User programs (dsl/user_spmm.h) on the GPU: the same program compiled for CUDA and for the CPU
// gives the same result on random graphs (empty rows, a very long row, duplicates, self-loops,
// shuffled and identity edge ids, bipartite, no edges), F = 1, odd F and F = 64; skipped, and
// reported as skipped, without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"
#include "gpu/gpu_fixture.h"
#include "support/compare.h"
#include "user_plugin/gat_attention.h"
#include "user_plugin/nonzero_scatter.h"
#include "user_plugin/staged_tiles.h"
#include "support/random_graph.h"
#include "support/cuda_user_schedules.h"

namespace gsparse {
namespace {

using dsl::At;

::testing::AssertionResult close_values(const Tensor &got, const Tensor &want, double rtol = 0);

class GpuUserProgram : public test::GpuTest {
protected:
    /// Random operands of program p on graph g (F columns, one where broadcast) on the host, and
    /// their device copies.
    struct Operands {
        std::map<std::string, Tensor> host, dev;
    };
    Operands random_operands(const dsl::SpmmProgram &p, const Graph &g, int F, uint64_t seed) {
        Operands o;
        for (const auto &op : p.operands()) {
            const int64_t rows = op.at == At::Src ? g.num_src() : op.at == At::Dst ? g.num_dst() : g.num_edges();
            o.host[op.name] = test::random_tensor({rows, op.broadcast ? 1 : F}, seed + o.host.size());
            o.dev[op.name] = to_device(o.host[op.name]);
        }
        return o;
    }

    /// weighted_program's operands (x, w, y) on g, its result under the CPU kernel kc, and each CUDA
    /// kernel's result (its output starting at random values: every element must be written)
    /// expected within rtol of it.
    using Named = std::vector<std::pair<std::string, dsl::SpmmKernel>>;
    void expect_weighted_match(const dsl::SpmmKernel &kc, const Named &kernels, const Graph &g, int F, double rtol,
                               const std::string &what) {
        Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
               y = test::random_tensor({g.num_dst(), F}, 3);
        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
        kc.run(g, {{"x", x}, {"w", w}, {"y", y}}, want);
        const std::map<std::string, Tensor> dev = {{"x", to_device(x)}, {"w", to_device(w)}, {"y", to_device(y)}};
        for (const auto &[point, k] : kernels) {
            Tensor out = to_device(test::random_tensor({g.num_dst(), F}, 9));
            k.run(g, dev, out, launch_);
            EXPECT_TRUE(close_values(to_host(out), want, rtol)) << what << " " << point << " F=" << F;
        }
    }

    /// Expects k (a CUDA kernel of weighted_program) to write 0 everywhere on a graph of 9 rows,
    /// 4 sources and no edges.
    void expect_zeros_without_edges(const dsl::SpmmKernel &k, int F, const std::string &what) {
        const std::vector<index_t> row_ptr(10, 0);
        Graph g = Graph::from_csr_arrays(9, 4, row_ptr.data(), nullptr, nullptr, 0);
        Tensor out = to_device(test::random_tensor({9, F}, 7));
        k.run(g,
              {{"x", to_device(test::random_tensor({4, F}, 8))}, {"w", Tensor::wrap(nullptr, {0, 1}, DType::F32, Device::CUDA)},
               {"y", to_device(test::random_tensor({9, F}, 9))}},
              out, launch_);
        Tensor h = to_host(out);
        for (int64_t i = 0; i < h.numel(); ++i) EXPECT_EQ(h.data_as<float>()[i], 0.f) << what << " " << i;
    }

    /// A CUDA view of g over device copies of its arrays (row_ptr padded to the view layout, the
    /// edge id of every position), knowing its longest row; with `order`, that row order.
    struct DeviceView {
        Tensor row_ptr, col_idx, edge_ids, row_order;
        GraphView view;
    };
    DeviceView device_view(const Graph &g, const std::vector<index_t> &order = {}) {
        const CSR &csr = g.csr();
        std::vector<index_t> row_ptr = csr.row_ptr, eids(static_cast<size_t>(csr.nnz()));
        row_ptr.resize(static_cast<size_t>((g.num_dst() + 31) / 32 * 32 + 2), static_cast<index_t>(csr.nnz()));
        for (int64_t e = 0; e < csr.nnz(); ++e) eids[static_cast<size_t>(e)] = static_cast<index_t>(csr.edge_id(e));
        DeviceView d;
        d.row_ptr = to_device(Tensor::from_vector(row_ptr, {static_cast<int64_t>(row_ptr.size())}));
        d.col_idx = to_device(Tensor::from_vector(csr.col_idx, {csr.nnz()}));
        d.edge_ids = to_device(Tensor::from_vector(eids, {csr.nnz()}));
        GraphView &v = d.view;
        v.device = Device::CUDA, v.num_src = g.num_src(), v.num_dst = g.num_dst(), v.num_edges = g.num_edges();
        v.row_ptr = d.row_ptr.data_as<index_t>(), v.row_ptr_len = d.row_ptr.numel();
        v.col_idx = d.col_idx.data_as<index_t>(), v.edge_ids = d.edge_ids.data_as<index_t>();
        v.max_degree = g.max_row_length();
        if (!order.empty()) {
            d.row_order = to_device(Tensor::from_vector(order, {g.num_dst()}));
            v.row_order = d.row_order.data_as<index_t>();
        }
        return d;
    }
};

/// x_u * w_e + y_v (a source, an edge and a destination operand) reduced by sum or max.
dsl::SpmmProgram weighted_program(const std::string &name, bool max = false) {
    dsl::SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    Halide::Expr y = p.operand("y", At::Dst);
    p.message(x * w + y);
    p.reduce(max ? dsl::Monoid::max() : dsl::Monoid::sum());
    return p;
}

/// A graph with a very long row (long_row neighbours), a bipartite one and a mostly empty one.
std::vector<test::RandomGraphOptions> three_shapes(int64_t long_row) {
    std::vector<test::RandomGraphOptions> shapes(3);
    shapes[0].long_row = long_row;
    shapes[1].num_src = 70;
    shapes[2].avg_degree = 0.5;
    shapes[2].empty_row_share = 0.7;
    return shapes;
}

/// Whether got matches want element for element within rtol * (1 + |want|) (0: the same values);
/// the message names the first three elements that do not.
::testing::AssertionResult close_values(const Tensor &got, const Tensor &want, double rtol) {
    if (got.numel() != want.numel())
        return ::testing::AssertionFailure() << got.numel() << " vs " << want.numel() << " elements";
    int64_t bad = 0;
    std::ostringstream what;
    for (int64_t i = 0; i < got.numel(); ++i) {
        const double a = got.data_as<float>()[i], b = want.data_as<float>()[i];
        if (!(std::abs(a - b) <= rtol * (1 + std::abs(b))) && bad++ < 3) what << " element " << i << ": " << a << " vs " << b << ";";
    }
    if (bad) return ::testing::AssertionFailure() << bad << " elements differ:" << what.str();
    return ::testing::AssertionSuccess();
}

TEST_F(GpuUserProgram, AttentionAndMaxMatchTheCpu) {
    auto build = [](dsl::SpmmProgram &p, bool max) {
        Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
        Halide::Expr m = Halide::select(s > 0, s, 0.2f * s) * p.operand("x", At::Src) * p.operand("w", At::Edge, true);
        p.message(m);
        p.reduce(max ? dsl::Monoid::max() : dsl::Monoid::sum());
    };
    std::vector<test::RandomGraphOptions> shapes(4);
    shapes[0].long_row = 500;
    shapes[1].shuffle_edge_ids = false;
    shapes[2].num_src = 70;
    shapes[3].avg_degree = 0.5;
    shapes[3].empty_row_share = 0.7;
    for (bool max : {false, true}) {
        dsl::SpmmProgram cpu_p(max ? "att_max_cpu" : "att_sum_cpu"), gpu_p(max ? "att_max_gpu" : "att_sum_gpu");
        build(cpu_p, max);
        build(gpu_p, max);
        for (int F : {1, 7, 64}) {
            dsl::SpmmKernel kc = cpu_p.compile(F), kg = gpu_p.compile(F, Device::CUDA);
            for (size_t i = 0; i < shapes.size(); ++i) {
                Graph g = test::random_graph(100 + i + F, shapes[i]);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), as = test::random_tensor({g.num_src(), 1}, 2),
                       ad = test::random_tensor({g.num_dst(), 1}, 3), w = test::random_tensor({g.num_edges(), 1}, 4);
                Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
                kc.run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}, {"w", w}}, want);
                Tensor out = device_empty({g.num_dst(), F}, DType::F32);
                kg.run(g,
                       {{"x", to_device(x)}, {"a_src", to_device(as)}, {"a_dst", to_device(ad)}, {"w", to_device(w)}},
                       out, launch_);
                Tensor got = to_host(out);
                int64_t bad = 0;
                for (int64_t k = 0; k < got.numel(); ++k) {
                    const double a = got.data_as<float>()[k], b = want.data_as<float>()[k];
                    // Sums over lanes of nonzeros add in another order than the CPU's loop.
                    if (!(std::abs(a - b) <= (max ? 1e-6 : 1e-4) * (1 + std::abs(b))) && bad++ < 3)
                        ADD_FAILURE() << "max=" << max << " F=" << F << " shape " << i << " element " << k << ": " << a
                                      << " vs " << b;
                }
                EXPECT_EQ(bad, 0);
            }
        }
    }
}

TEST_F(GpuUserProgram, BalancedRowsMatchTheNaturalOrder) {
    // Rows in order of in-degree (the default schedule's balanced_rows) on both CUDA forms: the
    // Graph's balancedIdx and a view's own order, against the CPU in the natural order; each row's
    // reduction is unchanged, so the results are the natural order's GPU results exactly.
    auto build = [](dsl::SpmmProgram &p) {
        Halide::Expr d = p.operand("d", At::Dst, true);
        p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true) + d);
        p.reduce(dsl::Monoid::max());
    };
    dsl::SpmmProgram cpu_p("bal_cpu"), gpu_p("bal_gpu");
    build(cpu_p);
    build(gpu_p);
    const std::vector<test::RandomGraphOptions> shapes = three_shapes(2000);
    for (int F : {1, 7, 64}) {
        dsl::SpmmKernel kc = cpu_p.compile(F);
        // Threads over rows; lanes of nonzeros merged in shared memory; merged through warp shuffles.
        for (const auto &[lanes, shuffles] : {std::pair<int64_t, int64_t>{1, 0}, {0, 1}, {0, 2}}) {
            dsl::SpmmKernel natural = gpu_p.compile(F, Device::CUDA, dsl::default_schedule(),
                                                    {{"nnz_lanes", lanes}, {"lane_merge", shuffles}});
            dsl::SpmmKernel ordered = gpu_p.compile(F, Device::CUDA, dsl::default_schedule(),
                                                    {{"nnz_lanes", lanes}, {"lane_merge", shuffles}, {"balanced_rows", 1}});
            ASSERT_TRUE(ordered.orders_rows());
            for (size_t i = 0; i < shapes.size(); ++i) {
                Graph g = test::random_graph(300 + i + F, shapes[i]);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                       d = test::random_tensor({g.num_dst(), 1}, 3);
                Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
                kc.run(g, {{"x", x}, {"w", w}, {"d", d}}, want);
                const std::map<std::string, Tensor> ops{{"x", to_device(x)}, {"w", to_device(w)}, {"d", to_device(d)}};
                Tensor a = device_empty({g.num_dst(), F}, DType::F32), b = device_empty({g.num_dst(), F}, DType::F32);
                natural.run(g, ops, a, launch_);
                ordered.run(g, ops, b, launch_);
                const std::string what = ordered.schedule() + " F=" + std::to_string(F) + " shape " + std::to_string(i);
                EXPECT_TRUE(close_values(to_host(b), to_host(a))) << what;
                EXPECT_TRUE(close_values(to_host(b), want)) << what;
                // A view over device copies of the arrays with its own order (reversed balancedIdx).
                const DeviceView dv =
                    device_view(g, std::vector<index_t>(g.balanced_idx().rbegin(), g.balanced_idx().rend()));
                Tensor c = device_empty({g.num_dst(), F}, DType::F32);
                ordered.run(dv.view, ops, c, launch_);
                EXPECT_TRUE(close_values(to_host(c), want)) << "view, " << what;
            }
        }
    }
}

TEST_F(GpuUserProgram, LanesMergedThroughWarpShufflesMatchTheCpu) {
    // lane_merge = 2 (lanes on gpu_lanes, merged through warp shuffles) for sum, max and GAT's
    // one-pass attention (a monoid over tuples), 8 and 32 lanes, one and four steps, against the CPU.
    auto make = [](const std::string &name, int which) {
        if (which == 2) return gsparse_examples::gat_attention(name);
        dsl::SpmmProgram p(name);
        p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true) + p.operand("d", At::Dst, true));
        p.reduce(which == 0 ? dsl::Monoid::sum() : dsl::Monoid::max());
        return p;
    };
    const std::vector<test::RandomGraphOptions> shapes = three_shapes(1500);
    for (int which : {0, 1, 2}) {
        dsl::SpmmProgram cpu_p = make("shfl_cpu_" + std::to_string(which), which);
        dsl::SpmmProgram gpu_p = make("shfl_gpu_" + std::to_string(which), which);
        for (int F : {1, 7, 64}) {
            dsl::SpmmKernel kc = cpu_p.compile(F);
            for (int64_t L : {8, 32})
                for (int64_t U : {1, 4}) {
                    dsl::SpmmKernel kg = gpu_p.compile(F, Device::CUDA, dsl::default_schedule(),
                                                       {{"nnz_lanes", L}, {"nnz_steps", U}, {"lane_merge", 2}});
                    for (size_t i = 0; i < shapes.size(); ++i) {
                        Graph g = test::random_graph(500 + i + F, shapes[i]);
                        const Operands ops = random_operands(gpu_p, g, F, 7);
                        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
                        kc.run(g, ops.host, want);
                        Tensor out = device_empty({g.num_dst(), F}, DType::F32);
                        kg.run(g, ops.dev, out, launch_);
                        EXPECT_TRUE(close_values(to_host(out), want, which == 1 ? 0 : 1e-4))
                            << kg.schedule() << " F=" << F << " shape " << i;
                    }
                }
        }
    }
}

TEST_F(GpuUserProgram, DefaultRunsAThreadPerRowOnShortRows) {
    // nnz_lanes = 0 on graphs whose rows are all short: the thread-per-row variant (compiled on the
    // first such graph) on a Graph and on a view that knows its longest row; a view that does not
    // runs the compiled lanes form. Both against the CPU, for sum, max and the tuple monoid.
    test::RandomGraphOptions short_rows;
    short_rows.long_row = dsl::kRowsFormMaxDegree;
    short_rows.avg_degree = 4;
    for (int which : {0, 1, 2}) {
        dsl::SpmmProgram p = which == 2 ? gsparse_examples::gat_attention("short_gat") : [&] {
            dsl::SpmmProgram q(which == 0 ? "short_sum" : "short_max");
            q.message(q.operand("x", At::Src) * q.operand("w", At::Edge, true));
            q.reduce(which == 0 ? dsl::Monoid::sum() : dsl::Monoid::max());
            return q;
        }();
        for (int F : {1, 7, 64}) {
            Graph g = test::random_graph(700 + F, short_rows);
            ASSERT_LE(g.max_row_length(), dsl::kRowsFormMaxDegree);
            dsl::SpmmKernel kc = p.compile(F), kg = p.compile(F, Device::CUDA);
            EXPECT_NE(kg.schedule(g).find("nnz_lanes=1"), std::string::npos) << kg.schedule(g);
            const Operands ops = random_operands(p, g, F, 11);
            Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
            kc.run(g, ops.host, want);
            Tensor out = device_empty({g.num_dst(), F}, DType::F32);
            kg.run(g, ops.dev, out, launch_);
            EXPECT_TRUE(close_values(to_host(out), want, which == 1 ? 0 : 1e-4)) << kg.schedule(g) << " F=" << F;
            // The same graph as a view, with and without its longest row.
            DeviceView d = device_view(g);
            GraphView &v = d.view;
            for (int64_t bound : {g.max_row_length(), int64_t(-1)}) {
                v.max_degree = bound;
                EXPECT_EQ(kg.schedule(v).find("nnz_lanes=1") != std::string::npos, bound >= 0) << kg.schedule(v);
                Tensor o = device_empty({g.num_dst(), F}, DType::F32);
                kg.run(v, ops.dev, o, launch_);
                EXPECT_TRUE(close_values(to_host(o), want, which == 1 ? 0 : 1e-4)) << kg.schedule(v) << " view F=" << F;
            }
        }
    }
}

TEST_F(GpuUserProgram, OnePassAttentionOverTuplesMatchesTheCpu) {
    // Scores up to 120: without the running maximum exp would overflow.
    dsl::SpmmProgram cpu_p = gsparse_examples::gat_attention("one_pass_cpu");
    dsl::SpmmProgram gpu_p = gsparse_examples::gat_attention("one_pass_gpu");
    std::vector<test::RandomGraphOptions> shapes(3);
    shapes[0].long_row = 700;
    shapes[1].num_src = 90;
    shapes[2].avg_degree = 0.5;
    shapes[2].empty_row_share = 0.6;
    // The default point splits rows over 8 lanes of nonzeros (the monoid merges), 4 steps; also 1, 2
    // and 32 lanes, and 1 and 4 steps.
    const std::vector<std::map<std::string, int64_t>> points = {
        {}, {{"nnz_lanes", 1}}, {{"nnz_lanes", 2}, {"nnz_steps", 1}}, {{"nnz_lanes", 32}, {"nnz_steps", 4}}};
    for (int F : {1, 7, 64}) {
        for (const auto &point : points) {
            dsl::SpmmKernel kc = cpu_p.compile(F), kg = gpu_p.compile(F, Device::CUDA, dsl::default_schedule(), point);
            for (size_t i = 0; i < shapes.size(); ++i) {
                Graph g = test::random_graph(300 + i + F, shapes[i]);
                Tensor x = test::random_tensor({g.num_src(), F}, 1),
                       as = test::random_tensor({g.num_src(), 1}, 2, DType::F32, 0., 60.),
                       ad = test::random_tensor({g.num_dst(), 1}, 3, DType::F32, 0., 60.);
                Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
                kc.run(g, {{"x", x}, {"a_src", as}, {"a_dst", ad}}, want);
                Tensor out = device_empty({g.num_dst(), F}, DType::F32);
                kg.run(g, {{"x", to_device(x)}, {"a_src", to_device(as)}, {"a_dst", to_device(ad)}}, out, launch_);
                Tensor got = to_host(out);
                int64_t bad = 0;
                for (int64_t k = 0; k < got.numel(); ++k) {
                    const double a = got.data_as<float>()[k], b = want.data_as<float>()[k];
                    if (!(std::abs(a - b) <= 1e-4 * (1 + std::abs(b))) && bad++ < 3)
                        ADD_FAILURE() << kg.schedule() << " F=" << F << " shape " << i << " element " << k << ": " << a
                                      << " vs " << b;
                }
                EXPECT_EQ(bad, 0);
            }
        }
    }
}

TEST_F(GpuUserProgram, AttentionGivenTheRowMaximaMatchesTheCpuAtEveryFeatureVector) {
    // gat_attention_shifted (one exp an edge) with 1, 2, 4 and 8 features a thread, long rows and
    // empty ones; the shift is each row's largest score (a constant per row suffices here).
    dsl::SpmmProgram cpu_p = gsparse_examples::gat_attention_shifted("shifted_cpu");
    dsl::SpmmProgram gpu_p = gsparse_examples::gat_attention_shifted("shifted_gpu");
    test::RandomGraphOptions opt;
    opt.long_row = 3000;
    opt.empty_row_share = 0.2;
    for (int F : {3, 64, 100}) {
        Graph g = test::random_graph(500 + F, opt);
        Tensor x = test::random_tensor({g.num_src(), F}, 1), as = test::random_tensor({g.num_src(), 1}, 2),
               ad = test::random_tensor({g.num_dst(), 1}, 3), shift = test::random_tensor({g.num_dst(), 1}, 4, DType::F32, 1., 2.);
        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
        const std::map<std::string, Tensor> host = {{"x", x}, {"a_src", as}, {"a_dst", ad}, {"shift", shift}};
        cpu_p.compile(F).run(g, host, want);
        std::map<std::string, Tensor> dev;
        for (const auto &[name, t] : host) dev.emplace(name, to_device(t));
        for (int64_t V : {0, 1, 2, 4, 8}) {
            if (V > F) continue;
            dsl::SpmmKernel k = gpu_p.compile(F, Device::CUDA, dsl::default_schedule(), {{"feature_vector", V}});
            Tensor out = device_empty({g.num_dst(), F}, DType::F32);
            k.run(g, dev, out, launch_);
            EXPECT_TRUE(close_values(to_host(out), want, 1e-4)) << k.schedule() << " F=" << F;
        }
    }
}

TEST_F(GpuUserProgram, PerEdgeProgramsMatchTheCpu) {
    // A per-edge (g-SDDMM-shaped) program on CUDA against the CPU: GAT's weights from the rows'
    // log-sum-exp, with source, destination and edge operands, shuffled edge ids and a long row;
    // a graph without edges writes nothing.
    auto make = [](const std::string &name) {
        dsl::SddmmProgram p(name);
        Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
        Halide::Expr w = Halide::exp(Halide::select(s > 0, s, 0.2f * s) - p.operand("lse", At::Dst, true));
        p.edge_value(w * p.operand("g", At::Edge) + p.operand("x", At::Src));
        return p;
    };
    dsl::SddmmProgram cpu_p = make("edge_cpu"), gpu_p = make("edge_gpu");
    test::RandomGraphOptions opt;
    opt.long_row = 2000;
    for (int F : {1, 5, 64}) {
        Graph g = test::random_graph(700 + F, opt);
        const std::map<std::string, Tensor> host = {
            {"a_src", test::random_tensor({g.num_src(), 1}, 1)}, {"a_dst", test::random_tensor({g.num_dst(), 1}, 2)},
            {"lse", test::random_tensor({g.num_dst(), 1}, 3)},   {"g", test::random_tensor({g.num_edges(), F}, 4)},
            {"x", test::random_tensor({g.num_src(), F}, 5)}};
        Tensor want = Tensor::empty({g.num_edges(), F}, DType::F32);
        cpu_p.compile(F).run(g, host, want);
        std::map<std::string, Tensor> dev;
        for (const auto &[name, t] : host) dev.emplace(name, to_device(t));
        Tensor out = device_empty({g.num_edges(), F}, DType::F32);
        gpu_p.compile(F, Device::CUDA).run(g, dev, out, launch_);
        Tensor got = to_host(out);
        int64_t bad = 0;
        for (int64_t i = 0; i < got.numel(); ++i) {
            const double a = got.data_as<float>()[i], b = want.data_as<float>()[i];
            if (!(std::abs(a - b) <= 1e-5 * (1 + std::abs(b))) && bad++ < 3)
                ADD_FAILURE() << "F=" << F << " element " << i << ": " << a << " vs " << b;
        }
        EXPECT_EQ(bad, 0);
    }
    const std::vector<index_t> row_ptr(4, 0);
    Graph empty = Graph::from_csr_arrays(3, 2, row_ptr.data(), nullptr, nullptr, 0);
    Tensor none = Tensor::wrap(nullptr, {0, 5}, DType::F32, Device::CUDA);
    gpu_p.compile(5, Device::CUDA)
        .run(empty,
             {{"a_src", to_device(test::random_tensor({2, 1}, 1))}, {"a_dst", to_device(test::random_tensor({3, 1}, 2))},
              {"lse", to_device(test::random_tensor({3, 1}, 3))}, {"g", none},
              {"x", to_device(test::random_tensor({2, 5}, 5))}},
             none, launch_);
}

TEST_F(GpuUserProgram, EdgeSchedulePointsMatchTheCpu) {
    // Points of the default edge schedule (threads over features and edges, edges a thread, features
    // a thread) across its CUDA space at F = 1, 5 and 64, every seventh point (the first and the
    // last among them), against the CPU default on a graph with a long row and shuffled edge ids.
    dsl::SddmmProgram p("edge_points_gpu");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge);
    p.edge_value(x * w + p.operand("d", At::Dst, true));
    test::RandomGraphOptions opt;
    opt.long_row = 3000;
    const dsl::EdgeScheduleDef &d = dsl::default_edge_schedule();
    for (int F : {1, 5, 64}) {
        Graph g = test::random_graph(900 + F, opt);
        const std::map<std::string, Tensor> host = {{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                    {"w", test::random_tensor({g.num_edges(), F}, 2)},
                                                    {"d", test::random_tensor({g.num_dst(), 1}, 3)}};
        Tensor want = Tensor::empty({g.num_edges(), F}, DType::F32);
        p.compile(F).run(g, host, want);
        std::map<std::string, Tensor> dev;
        for (const auto &[name, t] : host) dev.emplace(name, to_device(t));
        const auto space = d.space(F, Device::CUDA);
        ASSERT_FALSE(space.empty());
        std::vector<size_t> picked;
        for (size_t i = 0; i < space.size(); i += 7) picked.push_back(i);
        if (picked.back() != space.size() - 1) picked.push_back(space.size() - 1);
        for (size_t i : picked) {
            dsl::SddmmKernel k = p.compile(F, Device::CUDA, d, space[i]);
            Tensor out = device_empty({g.num_edges(), F}, DType::F32);
            k.run(g, dev, out, launch_);
            EXPECT_TRUE(close_values(to_host(out), want, 1e-5)) << k.schedule() << " F=" << F;
        }
    }
}

TEST_F(GpuUserProgram, RowSegmentsMatchTheCpu) {
    // Rows split into segments across the graph (the default schedule's row_segments: a kernel over
    // segments, then one over rows): a message of source, edge and destination operands and the
    // degree (sum, max) and GAT's online softmax with its log-sum-exp output, against the CPU's
    // in-order reduction; a row of 3000 neighbours spans 12 segments of 256, a graph without edges
    // gives zeros.
    auto weighted = [](const std::string &name, bool max) {
        dsl::SpmmProgram p(name);
        Halide::Expr x = p.operand("x", At::Src);
        Halide::Expr w = p.operand("w", At::Edge, true);
        Halide::Expr y = p.operand("y", At::Dst);
        p.message(x * w + y / Halide::cast<float>(p.degree()));
        p.reduce(max ? dsl::Monoid::max() : dsl::Monoid::sum());
        return p;
    };
    const std::map<std::string, int64_t> point{{"row_segments", 256}, {"nnz_lanes", 1}};
    std::vector<test::RandomGraphOptions> shapes = three_shapes(3000);
    for (int which = 0; which < 3; ++which) {
        dsl::SpmmProgram cpu_p = which == 2 ? gsparse_examples::gat_attention("seg_att_cpu", true)
                                            : weighted(which ? "seg_max_cpu" : "seg_sum_cpu", which == 1);
        dsl::SpmmProgram gpu_p = which == 2 ? gsparse_examples::gat_attention("seg_att_gpu", true)
                                            : weighted(which ? "seg_max_gpu" : "seg_sum_gpu", which == 1);
        const int outputs = which == 2 ? 2 : 1;
        for (int F : {1, 7, 64}) {
            dsl::SpmmKernel kc = cpu_p.compile(F), kg = gpu_p.compile(F, Device::CUDA, dsl::default_schedule(), point);
            ASSERT_EQ(kg.segment_length(), 256);
            for (size_t i = 0; i < shapes.size(); ++i) {
                Graph g = test::random_graph(200 + i + F, shapes[i]);
                Operands o = random_operands(cpu_p, g, F, 11);
                std::vector<Tensor> want, dev;
                std::vector<Tensor *> want_p, dev_p;
                for (int k = 0; k < outputs; ++k) {
                    want.push_back(Tensor::empty({g.num_dst(), F}, DType::F32));
                    dev.push_back(device_empty({g.num_dst(), F}, DType::F32));
                }
                for (int k = 0; k < outputs; ++k) {
                    want_p.push_back(&want[static_cast<size_t>(k)]);
                    dev_p.push_back(&dev[static_cast<size_t>(k)]);
                }
                kc.run(g, o.host, want_p);
                kg.run(g, o.dev, dev_p, launch_);
                EXPECT_EQ(kg.schedule(g).find("row_segments=256") != std::string::npos, g.max_row_length() > 256)
                    << kg.schedule(g);
                for (int k = 0; k < outputs; ++k)
                    EXPECT_TRUE(close_values(to_host(dev[static_cast<size_t>(k)]), want[static_cast<size_t>(k)],
                                             which == 1 ? 1e-6 : 1e-4))
                        << "program " << which << " F=" << F << " shape " << i << " output " << k;
            }
        }
    }
    // No edges: one empty segment, every row 0.
    dsl::SpmmProgram p = weighted("seg_empty_gpu", false);
    dsl::ScheduleDef always = dsl::default_schedule();
    always.for_graph = nullptr;  // split even where no row is long
    expect_zeros_without_edges(p.compile(5, Device::CUDA, always, point), 5, "segments");
}

TEST_F(GpuUserProgram, StagedTilesMatchTheCpu) {
    // The example schedule staged_tiles (stage_neighbours in shared memory, register_tiles) at points
    // of every knob, balanced rows too, on Graphs and a graph view, against the CPU's default
    // schedule: each row's reduction runs in order on one thread, so sums agree to rounding.
    dsl::SpmmProgram cpu_p = weighted_program("staged_ref"), gpu_p = weighted_program("staged_gpu");
    dsl::ScheduleDef balanced = gsparse_examples::staged_tiles();
    balanced.name = "staged_balanced";
    balanced.apply = [apply = balanced.apply](dsl::ScheduleContext &c) {
        c.balanced_rows();
        apply(c);
    };
    using Point = std::map<std::string, int64_t>;
    const std::vector<std::pair<int, std::vector<Point>>> cases = {
        {1, {{{"rows", 128}, {"nnz_tile", 8}}, {{"rows", 32}, {"nnz_tile", 64}}}},
        {5, {{{"rows", 8}, {"nnz_tile", 32}}, {{"rows", 1}, {"nnz_tile", 16}, {"feature_threads", 2}, {"register_tile", 2}}}},
        {64, {{{"rows", 4}, {"nnz_tile", 32}, {"feature_threads", 16}, {"register_tile", 4}},
              {{"rows", 8}, {"nnz_tile", 8}, {"feature_threads", 32}, {"register_tile", 2}},
              {{"rows", 16}, {"nnz_tile", 64}},
              {{"rows", 8}, {"nnz_tile", 32}, {"feature_threads", 8}, {"register_tile", 2}, {"vector", 4}}}}};
    for (const auto &[F, points] : cases) {
        dsl::SpmmKernel kc = cpu_p.compile(F);
        std::vector<std::pair<std::string, dsl::SpmmKernel>> kernels;
        for (const Point &pt : points) {
            kernels.emplace_back(dsl::point_str(gsparse_examples::staged_tiles(), pt),
                                 gpu_p.compile(F, Device::CUDA, gsparse_examples::staged_tiles(), pt));
        }
        kernels.emplace_back("balanced", gpu_p.compile(F, Device::CUDA, balanced, points[0]));
        auto shapes = three_shapes(700);
        for (size_t i = 0; i < shapes.size(); ++i) {
            Graph g = test::random_graph(300 + i + F, shapes[i]);
            Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                   y = test::random_tensor({g.num_dst(), F}, 3);
            Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
            kc.run(g, {{"x", x}, {"w", w}, {"y", y}}, want);
            const std::map<std::string, Tensor> dev = {{"x", to_device(x)}, {"w", to_device(w)}, {"y", to_device(y)}};
            for (const auto &[what, k] : kernels) {
                Tensor out = device_empty({g.num_dst(), F}, DType::F32);
                k.run(g, dev, out, launch_);
                EXPECT_TRUE(close_values(to_host(out), want, 1e-5)) << what << " F=" << F << " shape " << i;
            }
            // A graph view (row_ptr padded past the last row), without the row order.
            DeviceView d = device_view(g);
            Tensor out = device_empty({g.num_dst(), F}, DType::F32);
            kernels.front().second.run(d.view, dev, out, launch_);
            EXPECT_TRUE(close_values(to_host(out), want, 1e-5)) << "view F=" << F << " shape " << i;
        }
    }
}

TEST_F(GpuUserProgram, NonzeroScatterMatchesTheCpu) {
    // The example schedule nonzero_scatter (scatter_nonzeros: runs of consecutive positions, atomic
    // updates of their rows, sums accumulated in registers) at points of every knob, for sum (out
    // is the accumulator) and max (an output stage of its own, compare-and-swap updates), against
    // the CPU's default schedule; sums agree to the rounding of another order. A graph without
    // edges gives zeros.
    using Point = std::map<std::string, int64_t>;
    const std::vector<std::pair<int, std::vector<Point>>> cases = {
        {1, {{{"run", 1}}, {{"run", 8}}, {{"run", 64}, {"block", 512}}, {{"warp_steps", 1}}, {{"warp_steps", 16}}}},
        {5, {{{"run", 4}, {"feature_threads", 1}}, {{"run", 16}, {"feature_threads", 4}, {"block", 128}},
             {{"warp_steps", 4}, {"block", 128}}}},
        {64, {{{"run", 8}}, {{"run", 32}, {"feature_threads", 16}}}}};
    for (const bool max : {false, true}) {
        dsl::SpmmProgram cpu_p = weighted_program(max ? "scatter_max_ref" : "scatter_sum_ref", max),
                         gpu_p = weighted_program(max ? "scatter_max_gpu" : "scatter_sum_gpu", max);
        for (const auto &[F, points] : cases) {
            dsl::SpmmKernel kc = cpu_p.compile(F);
            Named kernels;
            for (const Point &pt : points)
                kernels.emplace_back(dsl::point_str(gsparse_examples::nonzero_scatter(), pt),
                                     gpu_p.compile(F, Device::CUDA, gsparse_examples::nonzero_scatter(), pt));
            auto shapes = three_shapes(3000);
            for (size_t i = 0; i < shapes.size(); ++i)
                expect_weighted_match(kc, kernels, test::random_graph(500 + i + F, shapes[i]), F, max ? 1e-6 : 1e-4,
                                      std::string(max ? "max" : "sum") + " shape " + std::to_string(i));
        }
        expect_zeros_without_edges(gpu_p.compile(5, Device::CUDA, gsparse_examples::nonzero_scatter()), 5,
                                   max ? "max" : "sum");
    }
}

TEST_F(GpuUserProgram, SourceTilesMatchTheCpu) {
    // split_rows(length, src_tile): segments that are runs of one row within one tile of source ids,
    // computed a thread a feature and segment, then each row merging its segments (in tile order):
    // the edges regrouped by tile and the segment table come with the graph to the device. Tiles of
    // 4 and 64 ids, runs cut after 32 positions, F = 1, 5, 64, against the CPU's default schedule.
    const dsl::ScheduleDef tiled = test::cuda_source_tiles_schedule();
    dsl::SpmmProgram cpu_p = weighted_program("tiles_ref"), gpu_p = weighted_program("tiles_gpu");
    for (const int F : {1, 5, 64}) {
        dsl::SpmmKernel kc = cpu_p.compile(F);
        const Named kernels = {{"tile 4", gpu_p.compile(F, Device::CUDA, tiled, {{"tile", 4}})},
                               {"tile 64", gpu_p.compile(F, Device::CUDA, tiled, {{"tile", 64}})}};
        auto shapes = three_shapes(2000);
        for (size_t i = 0; i < shapes.size(); ++i)
            expect_weighted_match(kc, kernels, test::random_graph(700 + i + F, shapes[i]), F, 1e-4,
                                  "shape " + std::to_string(i));
    }
}

TEST_F(GpuUserProgram, RowTailsMatchTheCpu) {
    // split_row_tails: each row reduces its first 32 or 256 positions, the rest of a long row comes in
    // tails merged into it atomically (three kernels), sum and max, F = 1, 5, 64, against the CPU's
    // default schedule; the row of 3000 neighbours has 93 tails of 32.
    for (const bool max : {false, true}) {
        dsl::SpmmProgram cpu_p = weighted_program(max ? "tails_max_ref" : "tails_sum_ref", max),
                         gpu_p = weighted_program(max ? "tails_max_gpu" : "tails_sum_gpu", max);
        for (const int F : {1, 5, 64}) {
            dsl::SpmmKernel kc = cpu_p.compile(F);
            const Named kernels = {
                {"tails of 32", gpu_p.compile(F, Device::CUDA, test::cuda_tails_schedule(), {{"length", 32}})},
                {"tails of 256", gpu_p.compile(F, Device::CUDA, test::cuda_tails_schedule(), {{"length", 256}})}};
            auto shapes = three_shapes(3000);
            for (size_t i = 0; i < shapes.size(); ++i)
                expect_weighted_match(kc, kernels, test::random_graph(800 + i + F, shapes[i]), F, max ? 1e-6 : 1e-4,
                                      std::string(max ? "max" : "sum") + " shape " + std::to_string(i));
        }
    }
}

TEST_F(GpuUserProgram, RelabeledSourcesMatchTheCpu) {
    // relabel_sources on CUDA: the source operand copied in the new order (a kernel), then the
    // default schedule's rows (threads per row, or lanes of nonzeros on the graph with a long row)
    // on the relabeled graph, stores to the old rows; against the CPU's default schedule. Square
    // graphs: the long-row and the mostly empty shapes.
    const dsl::ScheduleDef relabeled = test::cuda_relabeled_schedule();
    dsl::SpmmProgram cpu_p = weighted_program("relabel_ref"), gpu_p = weighted_program("relabel_gpu");
    for (const int F : {1, 5, 64}) {
        const dsl::SpmmKernel kc = cpu_p.compile(F);
        const Named kernels = {{"relabeled", gpu_p.compile(F, Device::CUDA, relabeled)}};
        auto shapes = three_shapes(2000);
        for (size_t i : {0u, 2u})
            expect_weighted_match(kc, kernels, test::random_graph(900 + i + F, shapes[i]), F, 1e-4,
                                  "shape " + std::to_string(i));
    }
}

TEST_F(GpuUserProgram, GraphWithoutEdgesGivesZeros) {
    dsl::SpmmProgram p("gpu_empty");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(dsl::Monoid::sum());
    dsl::SpmmKernel k = p.compile(5, Device::CUDA);
    const std::vector<index_t> row_ptr(10, 0);
    Graph g = Graph::from_csr_arrays(9, 4, row_ptr.data(), nullptr, nullptr, 0);
    Tensor out = to_device(test::random_tensor({9, 5}, 7));
    k.run(g,
          {{"x", to_device(test::random_tensor({4, 5}, 8))},
           {"w", Tensor::wrap(nullptr, {0, 1}, DType::F32, Device::CUDA)}},
          out, launch_);
    Tensor h = to_host(out);
    for (int64_t i = 0; i < h.numel(); ++i) EXPECT_EQ(h.data_as<float>()[i], 0.f) << i;
}

TEST_F(GpuUserProgram, SearchMeasuresEveryCudaPointAndAllMatchTheCpu) {
    dsl::SpmmProgram p("gpu_searched");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(dsl::Monoid::max());
    const int F = 24;
    Graph g = test::random_graph(9);
    Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2);
    Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
    p.compile(F).run(g, {{"x", x}, {"w", w}}, want);
    Tensor dx = to_device(x), dw = to_device(w), out = device_empty({g.num_dst(), F}, DType::F32);
    // The default schedule with fewer choices a knob (its directives and validity rule), lanes of
    // nonzeros and their steps included.
    dsl::ScheduleDef def = dsl::default_schedule();
    def.knobs = {{"rows_per_task", {16}, 16},    {"vector_width", {1}, 1},      {"feature_tile", {0, 8}, 0},
                 {"rows_per_block", {0, 4}, 0}, {"nnz_lanes", {0, 1, 4}, 0}, {"nnz_steps", {1, 4}, 4},
                 {"feature_vector", {0, 4}, 0}, {"lane_merge", {0, 2}, 0},
                 {"balanced_rows", {0, 1}, 0}};
    // (Without row_segments: a schedule that leaves a knob of the default schedule out runs it at 0.)
    auto measured = dsl::search_schedule(p, def, F, Device::CUDA, g, {{"x", dx}, {"w", dw}}, out, launch_, 3,
                                         [this] { sync(); });
    EXPECT_EQ(measured.size(), def.space(F, Device::CUDA).size());
    ASSERT_GE(measured.size(), 40u);
    for (const auto &m : measured) {
        dsl::SpmmKernel k = p.compile(F, Device::CUDA, def, m.point);
        k.run(g, {{"x", dx}, {"w", dw}}, out, launch_);
        Tensor got = to_host(out);
        for (int64_t i = 0; i < got.numel(); ++i)
            ASSERT_EQ(got.data_as<float>()[i], want.data_as<float>()[i]) << k.schedule() << " element " << i;
    }
}

TEST_F(GpuUserProgram, AlignedRowsMatchTheCpu) {
    // Rows of aligned vectors (aligned_rows, tests/support/cuda_user_schedules.h): each thread loads,
    // reduces and stores 2, 4 or 8 features as one vector; each row's reduction in order on one
    // thread, so sums agree with the CPU's to rounding. The tensors come from cudaMalloc (aligned).
    dsl::SpmmProgram cpu_p = weighted_program("aligned_ref"), gpu_p = weighted_program("aligned_gpu");
    const dsl::ScheduleDef def = test::vector_rows_schedule();
    for (int F : {2, 12, 16, 40}) {
        dsl::SpmmKernel kc = cpu_p.compile(F);
        Named kernels;
        for (int64_t V : {2, 4, 8})
            for (int64_t rows : {8, 32})
                if (F % V == 0) {
                    const std::map<std::string, int64_t> pt = {{"vector", V}, {"aligned", 1}, {"rows", rows}};
                    kernels.emplace_back(dsl::point_str(def, pt), gpu_p.compile(F, Device::CUDA, def, pt));
                }
        const auto shapes = three_shapes(1200);
        for (size_t i = 0; i < shapes.size(); ++i)
            expect_weighted_match(kc, kernels, test::random_graph(700 + i + F, shapes[i]), F, 1e-5,
                                  "aligned rows shape " + std::to_string(i));
        expect_zeros_without_edges(kernels.front().second, F, "aligned rows");
    }
}

TEST_F(GpuUserProgram, ColumnOperandsMatchTheCpu) {
    // x[u, f] * a[e, f / D] + b[v, f % D] (dsl::Columns: a weight an edge and head, a vector shared by
    // the heads) under the default schedule's forms (threads over rows, lanes of nonzeros) and
    // aligned vector rows, against the CPU.
    auto make = [](const std::string &name, int H, int D) {
        dsl::SpmmProgram p(name);
        Halide::Expr x = p.operand("x", dsl::At::Src);
        Halide::Expr a = p.operand("a", dsl::At::Edge, dsl::Columns{H, p.feature() / D});
        Halide::Expr b = p.operand("b", dsl::At::Dst, dsl::Columns{D, p.feature() % D});
        p.message(x * a + b);
        p.reduce(dsl::Monoid::sum());
        return p;
    };
    for (const auto &[H, D] : std::vector<std::pair<int, int>>{{4, 8}, {3, 5}, {8, 1}}) {
        const int F = H * D;
        dsl::SpmmProgram cpu_p = make("cols_cpu", H, D), gpu_p = make("cols_gpu", H, D);
        dsl::SpmmKernel kc = cpu_p.compile(F);
        std::vector<dsl::SpmmKernel> kernels;
        kernels.push_back(gpu_p.compile(F, Device::CUDA));
        kernels.push_back(gpu_p.compile(F, Device::CUDA, dsl::default_schedule(), {{"nnz_lanes", 1}}));
        if (F % 4 == 0) kernels.push_back(gpu_p.compile(F, Device::CUDA, test::vector_rows_schedule(), {{"vector", 4}}));
        const auto shapes = three_shapes(900);
        for (size_t i = 0; i < shapes.size(); ++i) {
            Graph g = test::random_graph(800 + i + F, shapes[i]);
            Tensor x = test::random_tensor({g.num_src(), F}, 1), a = test::random_tensor({g.num_edges(), H}, 2),
                   b = test::random_tensor({g.num_dst(), D}, 3);
            Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32);
            kc.run(g, {{"x", x}, {"a", a}, {"b", b}}, want);
            const std::map<std::string, Tensor> dev = {{"x", to_device(x)}, {"a", to_device(a)}, {"b", to_device(b)}};
            for (const dsl::SpmmKernel &k : kernels) {
                Tensor out = device_empty({g.num_dst(), F}, DType::F32);
                k.run(g, dev, out, launch_);
                EXPECT_TRUE(close_values(to_host(out), want, 1e-4)) << k.schedule() << " F=" << F << " shape " << i;
            }
        }
    }
}

TEST_F(GpuUserProgram, SegmentLanesMatchTheCpu) {
    // Segments of 32 and 1024 positions over 8 or 32 lanes merged through warp shuffles
    // (split_rows with lanes, tests/support/cuda_user_schedules.h), against the CPU: lanes reorder a
    // sum's additions, so to rounding.
    dsl::SpmmProgram cpu_p = weighted_program("seg_lanes_ref"), gpu_p = weighted_program("seg_lanes_gpu");
    const dsl::ScheduleDef def = test::cuda_segment_lanes_schedule();
    for (int F : {1, 4, 13}) {
        dsl::SpmmKernel kc = cpu_p.compile(F);
        Named kernels;
        for (const auto &pt : def.space(F, Device::CUDA))
            kernels.emplace_back(dsl::point_str(def, pt), gpu_p.compile(F, Device::CUDA, def, pt));
        const auto shapes = three_shapes(5000);
        for (size_t i = 0; i < shapes.size(); ++i)
            expect_weighted_match(kc, kernels, test::random_graph(900 + i + F, shapes[i]), F, 1e-4,
                                  "segment lanes shape " + std::to_string(i));
        expect_zeros_without_edges(kernels.front().second, F, "segment lanes");
    }
}

}  // namespace
}  // namespace gsparse
