// User-written g-SDDMM programs (dsl/user_sddmm.h): per-edge values against plain C++ loops over the
// edges in edge-id order on random graphs (empty rows, a very long row, duplicate edges,
// self-loops, shuffled edge ids, bipartite), F = 1, odd F and 4 heads; errors for incomplete
// programs and mismatched operands; the PTX a CUDA compilation emits; schedules (EdgeScheduleDef):
// every point of the default one against the same loops, CUDA points lowered to PTX, a user
// schedule searched, invalid points and schedules named.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "dsl/user_sddmm.h"
#include "support/compare.h"
#include "support/random_graph.h"
#include "support/throws_with.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::SddmmProgram;

std::vector<test::RandomGraphOptions> shapes() {
    std::vector<test::RandomGraphOptions> s(3);
    s[0].num_nodes = 150;
    s[0].long_row = 500;
    s[1].num_nodes = 150;
    s[1].num_src = 40;
    s[2].num_nodes = 150;
    s[2].shuffle_edge_ids = false;
    return s;
}

/// out[e, f] = value(f, u, v, e) over the edges in edge-id order.
void expect_edges(const Graph &g, const Tensor &out, int F,
                  const std::function<double(int, int64_t, int64_t, int64_t)> &value, const std::string &what) {
    const COO &coo = g.coo();
    ASSERT_EQ(out.size(0), coo.nnz()) << what;
    int64_t bad = 0;
    for (int64_t e = 0; e < coo.nnz(); ++e)
        for (int f = 0; f < F; ++f) {
            const double want = value(f, coo.col[e], coo.row[e], e), got = out.data_as<float>()[e * F + f];
            if (!(std::abs(got - want) <= 1e-5 * (1 + std::abs(want))) && bad++ < 5)
                ADD_FAILURE() << what << ": edge " << e << " feature " << f << " is " << got << ", expected " << want;
        }
    EXPECT_EQ(bad, 0) << what;
}

TEST(UserSddmm, AttentionScoresPerHead) {
    SddmmProgram p("gat_scores");
    Halide::Expr as = p.operand("a_src", At::Src);
    Halide::Expr ad = p.operand("a_dst", At::Dst);
    Halide::Expr s = as + ad;
    p.edge_value(Halide::select(s > 0, s, 0.2f * s));
    for (int H : {1, 4}) {
        dsl::SddmmKernel k = p.compile(H);
        for (size_t i = 0; i < shapes().size(); ++i) {
            Graph g = test::random_graph(10 + i, shapes()[i]);
            Tensor a = test::random_tensor({g.num_src(), H}, 1), b = test::random_tensor({g.num_dst(), H}, 2);
            Tensor out = Tensor::empty({g.num_edges(), H}, DType::F32);
            k.run(g, {{"a_src", a}, {"a_dst", b}}, out);
            expect_edges(g, out, H, [&](int f, int64_t u, int64_t v, int64_t) {
                const double x = double(a.data_as<float>()[u * H + f]) + b.data_as<float>()[v * H + f];
                return x > 0 ? x : 0.2 * x;
            }, "H=" + std::to_string(H) + " shape " + std::to_string(i));
        }
    }
}

TEST(UserSddmm, EdgeConditionedProductWithBroadcastGate) {
    SddmmProgram p("edge_product");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge);
    Halide::Expr gate = p.operand("gate", At::Dst, true);
    p.edge_value(x * w + Halide::exp(gate));
    const int F = 7;
    dsl::SddmmKernel k = p.compile(F);
    for (size_t i = 0; i < shapes().size(); ++i) {
        Graph g = test::random_graph(20 + i, shapes()[i]);
        Tensor tx = test::random_tensor({g.num_src(), F}, 3), tw = test::random_tensor({g.num_edges(), F}, 4),
               tg = test::random_tensor({g.num_dst(), 1}, 5);
        Tensor out = Tensor::empty({g.num_edges(), F}, DType::F32);
        k.run(g, {{"x", tx}, {"w", tw}, {"gate", tg}}, out);
        expect_edges(g, out, F, [&](int f, int64_t u, int64_t v, int64_t e) {
            return double(tx.data_as<float>()[u * F + f]) * tw.data_as<float>()[e * F + f] +
                   std::exp(double(tg.data_as<float>()[v]));
        }, "shape " + std::to_string(i));
    }
}

TEST(UserSddmm, GraphViewsOfTheCooRunLikeTheGraph) {
    // The COO in edge-id order in caller memory (as dynamic graphs hold it) gives the same values;
    // a view without its COO, or on another device, is a GraphError.
    SddmmProgram p("viewed_edges");
    Halide::Expr x = p.operand("x", At::Src);
    p.edge_value(x * p.operand("w", At::Edge, true) + p.operand("d", At::Dst, true));
    const int F = 3;
    dsl::SddmmKernel k = p.compile(F);
    for (size_t i = 0; i < shapes().size(); ++i) {
        Graph g = test::random_graph(40 + i, shapes()[i]);
        const std::map<std::string, Tensor> ops = {{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                   {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                                                   {"d", test::random_tensor({g.num_dst(), 1}, 3)}};
        Tensor want = Tensor::empty({g.num_edges(), F}, DType::F32), got = Tensor::empty({g.num_edges(), F}, DType::F32);
        k.run(g, ops, want);
        const COO &coo = g.coo();
        GraphView view;
        view.num_src = g.num_src(), view.num_dst = g.num_dst(), view.num_edges = g.num_edges();
        view.coo_src = coo.col.data(), view.coo_dst = coo.row.data(), view.coo_len = coo.nnz();
        k.run(view, ops, got);
        for (int64_t j = 0; j < got.numel(); ++j)
            ASSERT_EQ(got.data_as<float>()[j], want.data_as<float>()[j]) << "shape " << i << " element " << j;
        if (g.num_edges() == 0) continue;
        GraphView no_coo = view;
        no_coo.coo_src = no_coo.coo_dst = nullptr;
        EXPECT_TRUE(test::throws_with<GraphError>([&] { k.run(no_coo, ops, got); }, {"COO"}));
        GraphView on_gpu = view;
        on_gpu.device = Device::CUDA;
        EXPECT_TRUE(test::throws_with<GraphError>([&] { k.run(on_gpu, ops, got); }, {"viewed_edges", "graph view"}));
    }
}

TEST(UserSddmm, ErrorsNameTheProblem) {
    EXPECT_TRUE(test::throws_with<Error>([] { SddmmProgram("no_value").compile(2); }, {"has no edge value"}));
    EXPECT_TRUE(test::throws_with<Error>([] { SddmmProgram("bad name"); }, {"not a C identifier"}));
    SddmmProgram p("checked_sddmm");
    Halide::Expr x = p.operand("x", At::Src);
    p.edge_value(x * p.operand("w", At::Edge, true));
    dsl::SddmmKernel k = p.compile(3);
    Graph g = test::random_graph(4);
    Tensor out = Tensor::empty({g.num_edges(), 3}, DType::F32);
    Tensor tx = test::random_tensor({g.num_src(), 3}, 1), tw = test::random_tensor({g.num_edges(), 1}, 2);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", tx}}, out); },
                                         {"operand 'w' (read at the edge) is not given"}));
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", tw}, {"w", tw}}, out); }, {"operand 'x'"}));
    Tensor wrong = Tensor::empty({g.num_dst(), 3}, DType::F32);
    EXPECT_TRUE(test::throws_with<Error>([&] { k.run(g, {{"x", tx}, {"w", tw}}, wrong); }, {"out"}));
    dsl::SddmmKernel cuda = p.compile(3, Device::CUDA);
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { cuda.run(g, {{"x", tx}, {"w", tw}}, out); },
                                              {"needs a CudaLaunch"}));
}

TEST(UserSddmm, CudaCompilationEmitsAKernelWithBoundedGathers) {
    SddmmProgram p("scores_cuda");
    Halide::Expr s = p.operand("a_src", At::Src) + p.operand("a_dst", At::Dst);
    p.edge_value(Halide::select(s > 0, s, 0.2f * s));
    dsl::SddmmKernel k = p.compile(4, Device::CUDA);
    const std::string stmt = k.lowered_stmt();
    EXPECT_NE(stmt.find("halide_cuda_run"), std::string::npos) << stmt;
    // The gathers through src_idx are bounded to [0, num_src): the source operand's required rows.
    EXPECT_NE(stmt.find("halide_error_access_out_of_bounds(\"Input buffer scores_cuda_a_src\", 1, 0, num_src + -1"),
              std::string::npos) << stmt;
    const std::string ptx = k.assembly();
    EXPECT_NE(ptx.find(".entry"), std::string::npos);
}

/// A program of source, destination and edge operands (one broadcast) for the schedule tests.
SddmmProgram scheduled_program(const std::string &name) {
    SddmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge);
    Halide::Expr d = p.operand("d", At::Dst, true);
    p.edge_value(x * w + d);
    return p;
}

double scheduled_value(const std::map<std::string, Tensor> &ops, int F, int f, int64_t u, int64_t v, int64_t e) {
    return double(ops.at("x").data_as<float>()[u * F + f]) * ops.at("w").data_as<float>()[e * F + f] +
           ops.at("d").data_as<float>()[v];
}

std::map<std::string, Tensor> scheduled_operands(const Graph &g, int F) {
    return {{"x", test::random_tensor({g.num_src(), F}, 1)},
            {"w", test::random_tensor({g.num_edges(), F}, 2)},
            {"d", test::random_tensor({g.num_dst(), 1}, 3)}};
}

TEST(UserSddmm, EveryPointOfTheDefaultScheduleMatchesTheLoops) {
    const SddmmProgram p = scheduled_program("edge_points");
    const dsl::EdgeScheduleDef &d = dsl::default_edge_schedule();
    for (int F : {1, 7, 16}) {
        const auto space = d.space(F, Device::CPU);
        EXPECT_EQ(space.size(), F == 1 ? 4u : F == 7 ? 12u : 16u) << "F=" << F;
        std::vector<Graph> graphs;
        for (size_t i = 0; i < 2; ++i) graphs.push_back(test::random_graph(80 + F + i, shapes()[i]));
        for (const auto &point : space) {
            dsl::SddmmKernel k = p.compile(F, Device::CPU, d, point);
            EXPECT_EQ(k.schedule(), dsl::point_str(d, point));
            for (const Graph &g : graphs) {
                const auto ops = scheduled_operands(g, F);
                Tensor out = Tensor::empty({g.num_edges(), F}, DType::F32);
                k.run(g, ops, out);
                expect_edges(g, out, F, [&](int f, int64_t u, int64_t v, int64_t e) {
                    return scheduled_value(ops, F, f, u, v, e);
                }, k.schedule() + " F=" + std::to_string(F));
            }
        }
    }
    // The default point is the form edge programs had before schedules: tasks of 256 edges.
    EXPECT_EQ(p.compile(4).schedule(), "edge_default{block_threads=256, edges_per_task=256, edges_per_thread=1, "
                                       "feature_tile=0, feature_vector=1, vector_width=1}");
}

TEST(UserSddmm, CudaPointsOfTheDefaultScheduleLowerToKernels) {
    // Without a GPU: a point of the CUDA space at F = 1, 6 and 64 (the last one's: edges a thread,
    // several features a thread) lowers to a kernel launch and emits PTX (tests/gpu runs the space's
    // points against the CPU); the space holds each knob's forms.
    const SddmmProgram p = scheduled_program("edge_cuda_points");
    const dsl::EdgeScheduleDef &d = dsl::default_edge_schedule();
    for (int F : {1, 6, 64}) {
        const auto space = d.space(F, Device::CUDA);
        std::set<int64_t> vectors, per_thread;
        for (const auto &pt : space) {
            vectors.insert(pt.at("feature_vector"));
            per_thread.insert(pt.at("edges_per_thread"));
        }
        EXPECT_EQ(per_thread.size(), 3u) << "F=" << F;
        EXPECT_EQ(vectors.size(), F == 1 ? 1u : F == 6 ? 2u : 3u) << "F=" << F;
        ASSERT_FALSE(space.empty());
        dsl::SddmmKernel k = p.compile(F, Device::CUDA, d, space.back());
        EXPECT_NE(k.lowered_stmt().find("halide_cuda_run"), std::string::npos) << k.schedule();
        EXPECT_NE(k.assembly().find(".entry"), std::string::npos) << k.schedule();
    }
    dsl::SddmmKernel vec = p.compile(64, Device::CUDA, d, {{"feature_tile", 16}, {"feature_vector", 4},
                                                           {"edges_per_thread", 2}, {"block_threads", 128}});
    EXPECT_NE(vec.assembly().find(".entry"), std::string::npos);
}

TEST(UserSddmm, InvalidPointsAndSchedulesAreScheduleErrors) {
    const SddmmProgram p = scheduled_program("edge_bad_points");
    const dsl::EdgeScheduleDef &d = dsl::default_edge_schedule();
    auto expect_error = [&](const dsl::EdgeScheduleDef &def, const dsl::SchedulePoint &point, int F, Device dev,
                            const std::string &needle) {
        EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(F, dev, def, point); }, {needle}))
            << dsl::point_str(def, point);
    };
    expect_error(d, {{"rows", 2}}, 8, Device::CPU, "has no knob 'rows'");
    expect_error(d, {{"edges_per_task", 100}}, 8, Device::CPU, "edges_per_task = 100 is not one of its choices");
    expect_error(d, {{"feature_tile", 8}}, 8, Device::CPU, "CUDA knobs");
    expect_error(d, {{"vector_width", 16}}, 4, Device::CPU, "at least twice the feature count");
    expect_error(d, {{"edges_per_task", 64}}, 8, Device::CUDA, "CPU knobs");
    expect_error(d, {{"feature_vector", 4}}, 6, Device::CUDA, "must divide the feature count");
    expect_error(d, {{"feature_tile", 16}, {"feature_vector", 2}}, 16, Device::CUDA, "exceeds the feature count");
    expect_error(d, {{"feature_tile", 64}, {"block_threads", 32}}, 64, Device::CUDA, "not one of its choices");
    expect_error(d, {{"feature_tile", 64}}, 8, Device::CUDA, "at least twice the feature count");
    // A schedule without directives, one whose directives Halide rejects, and a CUDA schedule that
    // puts no loop on GPU blocks are named errors, not crashes or host loops over device memory.
    dsl::EdgeScheduleDef none;
    none.name = "no_apply";
    expect_error(none, {}, 4, Device::CPU, "has no directives");
    dsl::EdgeScheduleDef bad;
    bad.name = "bad_directives";
    bad.apply = [](dsl::EdgeScheduleContext &c) { c.out.gpu_threads(Halide::Var("not_a_loop")); };
    expect_error(bad, {}, 4, Device::CPU, "bad_directives{} failed on program edge_bad_points");
    dsl::EdgeScheduleDef host;
    host.name = "host_loops";
    host.apply = [](dsl::EdgeScheduleContext &c) { c.out.parallel(c.e); };
    expect_error(host, {}, 4, Device::CUDA, "binds no loop of program edge_bad_points's output to GPU blocks");
}

TEST(UserSddmm, UserEdgeScheduleIsSearched) {
    // A schedule written by a user: edges in tasks of `edges`, features unrolled or not, CPU and
    // CUDA; search_schedule measures every valid point, fastest first, and each gives the loops'
    // values; measure_points refuses a point the rule rejects, naming the reason.
    dsl::EdgeScheduleDef mine;
    mine.name = "my_edges";
    mine.knobs = {{"edges", {1, 16, 512}, 16}, {"unroll", {1, 2, 4}, 1}};
    mine.why_invalid = [](const dsl::SchedulePoint &pt, int features, Device) -> std::string {
        return features % pt.at("unroll") ? "unroll must divide the feature count" : "";
    };
    mine.apply = [](dsl::EdgeScheduleContext &c) {
        Halide::Var eo("eo"), ei("ei");
        c.out.split(c.e, eo, ei, static_cast<int>(c.knob("edges")), Halide::TailStrategy::GuardWithIf)
            .reorder(c.f, ei, eo);
        if (c.device == Device::CUDA) c.out.gpu_blocks(eo).gpu_threads(ei);
        else c.out.parallel(eo);
        if (c.knob("unroll") > 1) c.out.unroll(c.f, static_cast<int>(c.knob("unroll")));
    };
    const int F = 6;
    EXPECT_EQ(mine.space(F, Device::CPU).size(), 6u);  // unroll 4 does not divide 6
    const SddmmProgram p = scheduled_program("edge_searched");
    Graph g = test::random_graph(91, shapes()[0]);
    const auto ops = scheduled_operands(g, F);
    Tensor out = Tensor::empty({g.num_edges(), F}, DType::F32);
    const auto measured = dsl::search_schedule(p, mine, F, Device::CPU, g, ops, out, {}, 2);
    ASSERT_EQ(measured.size(), 6u);
    for (size_t i = 0; i < measured.size(); ++i) {
        EXPECT_GT(measured[i].median_ms, 0.0);
        if (i) {
            EXPECT_LE(measured[i - 1].median_ms, measured[i].median_ms);
        }
        p.compile(F, Device::CPU, mine, measured[i].point).run(g, ops, out);
        expect_edges(g, out, F, [&](int f, int64_t u, int64_t v, int64_t e) {
            return scheduled_value(ops, F, f, u, v, e);
        }, dsl::point_str(mine, measured[i].point));
    }
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { dsl::measure_points(p, mine, {{{"unroll", 4}}}, F, Device::CPU, g, ops, out, {}, 1); },
        {"unroll must divide the feature count"}));
    EXPECT_TRUE(test::throws_with<ShapeError>(
        [&] { dsl::measure_points(p, mine, {{}}, F, Device::CUDA, g, ops, out, {}, 1); }, {"needs sync"}));
    EXPECT_NE(p.compile(F, Device::CUDA, mine, {{"edges", 512}, {"unroll", 2}}).assembly().find(".entry"),
              std::string::npos);
}

}  // namespace
}  // namespace gsparse
