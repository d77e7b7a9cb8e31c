// Graph views built by gsparse's graph-build pipelines (api/view_build.h) on host arrays, against
// plain C++: the statistics, the row offsets, the narrowed arrays, operators on the built views,
// and every error a caller can provoke. The CUDA schedules are lowered to PTX here; their runs are
// in tests/gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "api/gsparse.h"
#include "ops/reference.h"
#include "runtime/graph_build_kernels.h"
#include "support/compare.h"
#include "support/random_graph.h"
#include "support/throws_with.h"

namespace gsparse {
namespace {

using test::throws_with;

/// Edges sorted by destination (stable), as int64 ids.
struct SortedEdges {
    int64_t num_src = 0, num_dst = 0;
    std::vector<int64_t> src, dst;
};

SortedEdges sorted_edges(uint64_t seed, const test::RandomGraphOptions &opt = {}) {
    test::EdgeList e = test::random_edges(seed, opt);
    std::vector<size_t> order(e.src.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return e.dst[a] < e.dst[b]; });
    SortedEdges s;
    s.num_src = e.num_src;
    s.num_dst = e.num_dst;
    for (size_t i : order) {
        s.src.push_back(e.src[i]);
        s.dst.push_back(e.dst[i]);
    }
    return s;
}

/// The arrays of one build, in the id type under test.
struct Build {
    DType dtype;
    std::vector<int32_t> src32, dst32;
    std::vector<int64_t> src64, dst64;
    std::vector<index_t> row_ptr, col_idx;
    std::vector<int64_t> workspace;

    Build(const SortedEdges &e, DType t) : dtype(t) {
        src64 = e.src;
        dst64 = e.dst;
        src32.assign(e.src.begin(), e.src.end());
        dst32.assign(e.dst.begin(), e.dst.end());
        row_ptr.assign(static_cast<size_t>(view_row_ptr_length(e.num_dst)), -7);
        col_idx.assign(std::max<size_t>(e.src.size(), 1), -7);
        workspace.resize(static_cast<size_t>(view_build_workspace_bytes(static_cast<int64_t>(e.src.size())) / 8));
    }
    Tensor src() { return ids(src32, src64); }
    Tensor dst() { return ids(dst32, dst64); }
    Tensor ids(std::vector<int32_t> &a, std::vector<int64_t> &b) {
        const int64_t n = static_cast<int64_t>(b.size());
        return dtype == DType::I32 ? Tensor::wrap(a.data(), {n}, DType::I32) : Tensor::wrap(b.data(), {n}, DType::I64);
    }
};

std::vector<index_t> reference_row_ptr(const SortedEdges &e, int64_t rows) {
    std::vector<index_t> out;
    for (int64_t r = 0; r < rows; r++)
        out.push_back(static_cast<index_t>(std::lower_bound(e.dst.begin(), e.dst.end(), r) - e.dst.begin()));
    return out;
}

class ViewBuild : public ::testing::TestWithParam<DType> {};

TEST_P(ViewBuild, SortedCooGivesTheCsrAndTheStatistics) {
    // Sizes whose statistics take 0 to 3 combining passes (about 8 edges a thread, 64 partials a
    // combining thread).
    for (int64_t nodes : {1, 40, 700, 40000}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = nodes;
        opt.num_src = nodes + 3;
        opt.long_row = nodes == 1 ? 1 : 4 * nodes;
        const SortedEdges e = sorted_edges(static_cast<uint64_t>(nodes) * 7 + 1, opt);
        ASSERT_FALSE(e.src.empty());
        Build b(e, GetParam());
        ViewBuildOptions o;
        o.max_degree = -1;
        GraphView g = view_from_sorted_coo(b.src(), b.dst(), e.num_src, e.num_dst, b.row_ptr.data(), b.col_idx.data(),
                                           b.workspace.data(), o);
        EXPECT_EQ(b.row_ptr, reference_row_ptr(e, view_row_ptr_length(e.num_dst))) << "nodes " << nodes;
        const CooStats s = check_coo(b.src(), b.dst(), e.num_src, e.num_dst, b.workspace.data());
        EXPECT_EQ(s.min_src, *std::min_element(e.src.begin(), e.src.end()));
        EXPECT_EQ(s.max_src, *std::max_element(e.src.begin(), e.src.end()));
        EXPECT_EQ(s.min_dst, e.dst.front());
        EXPECT_EQ(s.max_dst, e.dst.back());
        EXPECT_EQ(s.descents, 0);
        // The view runs operators: g-SpMM sum against the reference on the same edges.
        const int64_t E = static_cast<int64_t>(e.src.size());
        EXPECT_EQ(g.num_edges, E);
        std::vector<index_t> col(e.src.begin(), e.src.end());
        EXPECT_TRUE(std::equal(col.begin(), col.end(), g.col_idx)) << "nodes " << nodes;
        Graph ref = Graph::from_csr_arrays(e.num_dst, e.num_src, reference_row_ptr(e, e.num_dst + 1).data(), col.data(),
                                           nullptr, E);
        Tensor x = test::random_tensor({e.num_src, 3}, 5);
        Tensor out = Tensor::empty({e.num_dst, 3}, DType::F32);
        const SpmmSpec sum{BinaryOp::CopyLhs, ReduceOp::Sum};
        gspmm_into(g, sum, x, {}, out);
        EXPECT_TRUE(test::matches_reference(out, reference_spmm(ref, sum, x, {}), 1e-5)) << "nodes " << nodes;
    }
}

TEST_P(ViewBuild, UnsortedEdgesAreCountedAndRefused) {
    SortedEdges e = sorted_edges(11);
    std::mt19937_64 rng(3);
    std::vector<size_t> order(e.src.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    SortedEdges shuffled = e;
    int64_t descents = 0;
    for (size_t i = 0; i < order.size(); i++) {
        shuffled.src[i] = e.src[order[i]];
        shuffled.dst[i] = e.dst[order[i]];
        if (i > 0 && shuffled.dst[i] < shuffled.dst[i - 1]) descents++;
    }
    Build b(shuffled, GetParam());
    const CooStats s = build_sorted_csr(b.src(), b.dst(), e.num_src, e.num_dst, b.row_ptr.data(), b.col_idx.data(),
                                        b.workspace.data());
    EXPECT_EQ(s.descents, descents);
    EXPECT_FALSE(s.sorted());
    EXPECT_TRUE(throws_with<GraphError>([&] {
        view_from_sorted_coo(b.src(), b.dst(), e.num_src, e.num_dst, b.row_ptr.data(), b.col_idx.data(),
                             b.workspace.data());
    }, {"not sorted by destination", std::to_string(descents) + " edges"}));
    // The COO view takes them in any order: narrowed, padded with 0, in edge order.
    std::vector<index_t> cs(static_cast<size_t>(view_coo_length(static_cast<int64_t>(e.src.size()))), -7), cd = cs;
    GraphView c = coo_view_from_edges(b.src(), b.dst(), e.num_src, e.num_dst, cs.data(), cd.data(),
                                      static_cast<int64_t>(cs.size()), b.workspace.data());
    EXPECT_FALSE(c.has_csr());
    for (size_t i = 0; i < cs.size(); i++) {
        ASSERT_EQ(cs[i], i < shuffled.src.size() ? shuffled.src[i] : 0) << i;
        ASSERT_EQ(cd[i], i < shuffled.dst.size() ? shuffled.dst[i] : 0) << i;
    }
}

TEST_P(ViewBuild, BadIdsAreNamed) {
    const SortedEdges e = sorted_edges(5);
    struct Case {
        const char *name;
        int64_t index;
        bool source;
        int64_t value;
        std::string message, names;
    };
    const int64_t last = static_cast<int64_t>(e.src.size()) - 1;
    for (const Case &c : std::vector<Case>{
             {"negative source", 3, true, -4, "negative source id -4", "source"},
             {"negative destination", 0, false, -1, "negative destination id -1", "destination"},
             {"source past num_src", last, true, e.num_src, "source id " + std::to_string(e.num_src), "num_src"},
             {"destination past num_dst", last, false, e.num_dst + 5,
              "destination id " + std::to_string(e.num_dst + 5), "num_dst"}}) {
        SortedEdges bad = e;
        (c.source ? bad.src : bad.dst)[static_cast<size_t>(c.index)] = c.value;
        Build b(bad, GetParam());
        EXPECT_TRUE(throws_with<GraphError>([&] {
            build_sorted_csr(b.src(), b.dst(), e.num_src, e.num_dst, b.row_ptr.data(), b.col_idx.data(),
                             b.workspace.data());
        }, {c.message, c.names})) << c.name;
        std::vector<index_t> cs(static_cast<size_t>(view_coo_length(last + 1))), cd = cs;
        EXPECT_TRUE(throws_with<GraphError>([&] {
            coo_view_from_edges(b.src(), b.dst(), e.num_src, e.num_dst, cs.data(), cd.data(),
                                static_cast<int64_t>(cs.size()), b.workspace.data());
        }, {c.message, c.names})) << c.name;
    }
}

TEST_P(ViewBuild, NoEdges) {
    SortedEdges e;
    e.num_src = 4;
    e.num_dst = 37;
    Build b(e, GetParam());
    GraphView g = view_from_sorted_coo(b.src(), b.dst(), e.num_src, e.num_dst, b.row_ptr.data(), nullptr,
                                       b.workspace.data());
    EXPECT_EQ(b.row_ptr, std::vector<index_t>(b.row_ptr.size(), 0));
    Tensor x = test::random_tensor({e.num_src, 2}, 1);
    Tensor out = Tensor::empty({e.num_dst, 2}, DType::F32);
    gspmm_into(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, out);
    for (int64_t i = 0; i < out.numel(); i++) EXPECT_EQ(out.data_as<float>()[i], 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Ids, ViewBuild, ::testing::Values(DType::I32, DType::I64),
                         [](const auto &info) { return std::string(dtype_name(info.param)); });

TEST(ViewWithSelfLoops, AppendsOneLoopPerRowAndFlagsTheGraphsOwn) {
    // Bipartite sizes both ways and square, with self-loops, duplicates, empty rows and a long row.
    for (auto [nodes, sources] : {std::pair<int64_t, int64_t>{1, 1}, {40, 70}, {70, 40}, {700, 700}, {3000, 2900}}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = nodes;
        opt.num_src = sources;
        opt.self_loop_share = 0.2;
        opt.long_row = 4 * nodes;
        const SortedEdges e = sorted_edges(static_cast<uint64_t>(nodes + sources), opt);
        const int64_t E = static_cast<int64_t>(e.src.size()), n = std::min(e.num_src, e.num_dst);
        Build b(e, DType::I64);
        GraphView g = view_from_sorted_coo(b.src(), b.dst(), e.num_src, e.num_dst, b.row_ptr.data(), b.col_idx.data(),
                                           b.workspace.data());
        g.max_degree = E;
        const int64_t len = view_coo_length(E + n);
        std::vector<index_t> row_ptr(static_cast<size_t>(view_row_ptr_length(e.num_dst)), -7), src(len, -7), dst(len, -7);
        std::vector<uint8_t> own(static_cast<size_t>(len), 7);
        GraphView l = view_with_self_loops(g, row_ptr.data(), src.data(), dst.data(), own.data(), len);
        // Plain C++: every row's edges in order, then its loop; rows past n keep theirs.
        std::vector<index_t> want_rp = {0}, want_src, want_dst;
        std::vector<uint8_t> want_own;
        for (int64_t r = 0; r < e.num_dst; r++) {
            for (int64_t p = b.row_ptr[r]; p < b.row_ptr[r + 1]; p++) {
                want_src.push_back(static_cast<index_t>(e.src[p]));
                want_dst.push_back(static_cast<index_t>(r));
                want_own.push_back(e.src[p] == r);
            }
            if (r < n) {
                want_src.push_back(static_cast<index_t>(r));
                want_dst.push_back(static_cast<index_t>(r));
                want_own.push_back(0);
            }
            want_rp.push_back(static_cast<index_t>(want_src.size()));
        }
        want_rp.resize(row_ptr.size(), static_cast<index_t>(E + n));
        want_src.resize(len, 0);
        want_dst.resize(len, 0);
        want_own.resize(len, 0);
        const std::string what = std::to_string(sources) + " x " + std::to_string(nodes);
        EXPECT_EQ(row_ptr, want_rp) << what;
        EXPECT_EQ(src, want_src) << what;
        EXPECT_EQ(dst, want_dst) << what;
        EXPECT_EQ(own, want_own) << what;
        EXPECT_EQ(l.num_edges, E + n);
        EXPECT_EQ(l.col_idx, src.data());
        EXPECT_EQ(l.max_degree, E + 1);
        EXPECT_TRUE(l.identity_edge_ids());
        // The view runs operators: g-SpMM sum against the reference on the same edges.
        Graph ref = Graph::from_csr_arrays(e.num_dst, e.num_src, want_rp.data(), want_src.data(), nullptr, E + n);
        Tensor x = test::random_tensor({e.num_src, 3}, 5);
        Tensor out = Tensor::empty({e.num_dst, 3}, DType::F32);
        const SpmmSpec sum{BinaryOp::CopyLhs, ReduceOp::Sum};
        gspmm_into(l, sum, x, {}, out);
        EXPECT_TRUE(test::matches_reference(out, reference_spmm(ref, sum, x, {}), 1e-5)) << what;
    }
}

TEST(ViewWithSelfLoops, BadArraysAreNamed) {
    std::vector<int64_t> s = {0, 1}, d = {0, 1}, ws(64);
    std::vector<index_t> rp(64), col(2), out_rp(64), a(1024), c(1024);
    std::vector<uint8_t> own(1024);
    GraphView g = view_from_sorted_coo(Tensor::wrap(s.data(), {2}, DType::I64), Tensor::wrap(d.data(), {2}, DType::I64),
                                       2, 2, rp.data(), col.data(), ws.data());
    EXPECT_TRUE(throws_with<ShapeError>([&] { view_with_self_loops(g, out_rp.data(), a.data(), c.data(), nullptr, 1024); },
                                        {"own-loop"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] { view_with_self_loops(g, out_rp.data(), a.data(), c.data(), own.data(), 3); },
                                        {"COO arrays have 3 entries"}));
    GraphView coo;
    coo.num_src = coo.num_dst = 2;
    EXPECT_TRUE(throws_with<GraphError>([&] { view_with_self_loops(coo, out_rp.data(), a.data(), c.data(), own.data(), 1024); },
                                        {"has neither"}));
    std::vector<float> w(4);
    std::vector<int32_t> deg(8);
    GraphView loops = view_with_self_loops(g, out_rp.data(), a.data(), c.data(), own.data(), 1024);
    EXPECT_TRUE(throws_with<ShapeError>([&] { gcn_self_loop_weights(loops, own.data(), 1, true, deg.data(), nullptr); },
                                        {"weight arrays"}));
    GraphView bipartite = loops;
    bipartite.num_src = 3;
    EXPECT_TRUE(throws_with<ShapeError>([&] { gcn_self_loop_weights(bipartite, own.data(), 1, true, deg.data(), w.data()); },
                                        {"square graph"}));
}

/// GCN's weights of a self-loop graph in plain C++: (edges, flags) -> weights (see
/// gcn_self_loop_weights).
std::vector<float> reference_gcn_weights(const std::vector<index_t> &src, const std::vector<index_t> &dst,
                                         const std::vector<uint8_t> &own, int64_t num_dst, int64_t loops, float fill,
                                         bool normalize) {
    std::vector<int64_t> others(num_dst, 0), own_count(num_dst, 0);
    for (size_t e = 0; e < src.size(); e++) {
        if (own[e]) own_count[dst[e]]++;
        else if (src[e] != dst[e]) others[dst[e]]++;
    }
    auto l = [&](int64_t v) { return own_count[v] > 0 ? 1.0 : static_cast<double>(fill); };
    auto dinv = [&](int64_t v) {
        const double d = static_cast<double>(others[v]) + (v < loops ? l(v) : 0.0);
        return d > 0 ? 1.0 / std::sqrt(d) : 0.0;
    };
    std::vector<float> w;
    for (size_t e = 0; e < src.size(); e++) {
        const double base = own[e] ? 0.0 : src[e] == dst[e] ? l(dst[e]) : 1.0;
        w.push_back(static_cast<float>(normalize ? base * dinv(src[e]) * dinv(dst[e]) : base));
    }
    return w;
}

TEST(ViewWithSelfLoops, FromACooAndGcnWeights) {
    for (int64_t nodes : {1, 50, 2000}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = nodes;
        opt.self_loop_share = 0.2;
        opt.long_row = 4 * nodes;
        const test::EdgeList e = test::random_edges(static_cast<uint64_t>(nodes) + 9, opt);
        const int64_t E = static_cast<int64_t>(e.src.size()), n = nodes;
        std::vector<index_t> in_src = e.src, in_dst = e.dst;
        in_src.resize(view_coo_length(E), 0);
        in_dst.resize(view_coo_length(E), 0);
        GraphView g;
        g.num_src = g.num_dst = nodes;
        g.num_edges = E;
        g.coo_src = in_src.data();
        g.coo_dst = in_dst.data();
        g.coo_len = static_cast<int64_t>(in_src.size());
        const int64_t len = view_coo_length(E + n);
        std::vector<index_t> src(len, -7), dst(len, -7);
        std::vector<uint8_t> own(len, 7);
        GraphView l = view_with_self_loops(g, nullptr, src.data(), dst.data(), own.data(), len);
        EXPECT_FALSE(l.has_csr());
        std::vector<index_t> want_src = e.src, want_dst = e.dst;
        std::vector<uint8_t> want_own;
        for (int64_t i = 0; i < E; i++) want_own.push_back(e.src[i] == e.dst[i]);
        for (int64_t v = 0; v < n; v++) {
            want_src.push_back(static_cast<index_t>(v));
            want_dst.push_back(static_cast<index_t>(v));
            want_own.push_back(0);
        }
        std::vector<index_t> ws = want_src, wd = want_dst;
        std::vector<uint8_t> wo = want_own;
        ws.resize(len, 0);
        wd.resize(len, 0);
        wo.resize(len, 0);
        EXPECT_EQ(src, ws) << nodes;
        EXPECT_EQ(dst, wd) << nodes;
        EXPECT_EQ(own, wo) << nodes;
        EXPECT_EQ(l.num_edges, E + n);
        for (float fill : {1.0f, 2.0f}) {
            for (bool normalize : {true, false}) {
                std::vector<float> w(static_cast<size_t>(E + n), -1.0f);
                std::vector<int32_t> deg(static_cast<size_t>(2 * nodes), -1);
                gcn_self_loop_weights(l, own.data(), fill, normalize, deg.data(), w.data());
                const auto want = reference_gcn_weights(want_src, want_dst, want_own, nodes, n, fill, normalize);
                ASSERT_EQ(w.size(), want.size());
                for (size_t i = 0; i < w.size(); i++)
                    ASSERT_NEAR(w[i], want[i], 1e-6 * (1 + std::fabs(want[i]))) << nodes << " edge " << i;
            }
        }
    }
}

TEST(CheckCsr, AcceptsValidCsrsAndNamesEachFault) {
    std::vector<int64_t> ws(static_cast<size_t>(view_build_workspace_bytes(70000) / 8));
    auto check = [&](std::vector<int64_t> rp, std::vector<int32_t> col, int64_t num_src) {
        return [=, &ws]() mutable {
            check_csr(Tensor::wrap(rp.data(), {static_cast<int64_t>(rp.size())}, DType::I64),
                      Tensor::wrap(col.data(), {static_cast<int64_t>(col.size())}, DType::I32), num_src, ws.data());
        };
    };
    EXPECT_NO_THROW(check({0, 2, 2, 3}, {0, 4, 1}, 5)());
    EXPECT_NO_THROW(check({0}, {}, 1)());  // no rows, no edges
    EXPECT_TRUE(throws_with<GraphError>(check({0, 2, 1, 3}, {0, 4, 1}, 5), {"row_ptr decreases"}));
    EXPECT_TRUE(throws_with<GraphError>(check({1, 2, 2, 3}, {0, 4, 1}, 5), {"row_ptr[0] = 1, expected 0"}));
    EXPECT_TRUE(throws_with<GraphError>(check({0, 2, 2, 4}, {0, 4, 1}, 5), {"row_ptr[-1] = 4", "3 entries"}));
    EXPECT_TRUE(throws_with<GraphError>(check({0, 2, 2, 3}, {0, -4, 1}, 5), {"negative source id -4"}));
    EXPECT_TRUE(throws_with<GraphError>(check({0, 2, 2, 3}, {0, 5, 1}, 5), {"source id 5", "num_src = 5"}));
    EXPECT_TRUE(throws_with<GraphError>(check({}, {}, 5), {"num_dst + 1 offsets"}));
    // Long arrays whose statistics take combining passes: the fault at the end is found.
    std::vector<int64_t> rp(70001);
    std::vector<int32_t> col(70000, 1);
    std::iota(rp.begin(), rp.end(), 0);
    EXPECT_NO_THROW(check(rp, col, 2)());
    col.back() = 2;
    EXPECT_TRUE(throws_with<GraphError>(check(rp, col, 2), {"source id 2"}));
    col.back() = 1;
    rp[69999] = 70000, rp[70000] = 69999;
    EXPECT_TRUE(throws_with<GraphError>(check(rp, col, 2), {"row_ptr decreases"}));
}

TEST(ViewBuildErrors, ShapesDtypesAndBuffersAreChecked) {
    std::vector<int64_t> s = {0, 1}, d = {0, 0};
    std::vector<int32_t> d32 = {0, 0};
    std::vector<float> f = {0, 1};
    std::vector<index_t> row_ptr(64), col(2);
    std::vector<int64_t> ws(64);
    Tensor src = Tensor::wrap(s.data(), {2}, DType::I64), dst = Tensor::wrap(d.data(), {2}, DType::I64);
    auto build = [&](const Tensor &a, const Tensor &b, index_t *cols, void *w) {
        build_sorted_csr(a, b, 2, 2, row_ptr.data(), cols, w);
    };
    EXPECT_TRUE(throws_with<ShapeError>([&] { build(src, Tensor::wrap(d.data(), {1}, DType::I64), col.data(), ws.data()); },
                                        {"different numbers of edges"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] { build(src, Tensor::wrap(d32.data(), {2}, DType::I32), col.data(), ws.data()); },
                                        {"differ in dtype"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] { build(Tensor::wrap(f.data(), {2}, DType::F32), dst, col.data(), ws.data()); },
                                        {"int32 or int64"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] { build(Tensor::wrap(s.data(), {1, 2}, DType::I64), dst, col.data(), ws.data()); },
                                        {"1-D"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] { build(src, dst, nullptr, ws.data()); }, {"col_idx"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] { build(src, dst, col.data(), nullptr); }, {"workspace"}));
    EXPECT_TRUE(throws_with<ShapeError>([&] {
        build(src, dst, col.data(), reinterpret_cast<char *>(ws.data()) + 4);
    }, {"aligned"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { build_sorted_csr(src, dst, -1, 2, row_ptr.data(), col.data(), ws.data()); },
                                        {"num_src = -1"}));
    std::vector<index_t> short_coo(4);
    EXPECT_TRUE(throws_with<ShapeError>([&] {
        coo_view_from_edges(src, dst, 2, 2, short_coo.data(), short_coo.data(), 0, ws.data());
    }, {"COO arrays have 0 entries"}));
    // The caller's arrays are left as they were.
    EXPECT_EQ(s, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(d, (std::vector<int64_t>{0, 0}));
}

TEST(ViewBuildCuda, PipelinesLowerToKernels) {
    // No GPU needed: the CUDA schedules lower, and their PTX is emitted, on any machine.
    for (DType t : {DType::I32, DType::I64}) {
        const std::string stmt = GraphBuildKernels(t, Device::CUDA).lowered_stmts();
        for (const char *kernel : {"_kernel_coo_stats", "_kernel_stats_combine", "_kernel_row_offsets",
                                   "_kernel_narrow_index", "_kernel_narrow_pair", "_kernel_loop_row_ptr",
                                   "_kernel_loop_coo", "_kernel_loop_coo_append", "_kernel_loop_degrees",
                                   "_kernel_gcn_weights"})
            EXPECT_NE(stmt.find(kernel), std::string::npos) << kernel << "\n" << stmt;
        // The degree counters add atomically (PTX atom / red on global memory).
        EXPECT_TRUE(stmt.find("atom.global.add") != std::string::npos ||
                    stmt.find("red.global.add") != std::string::npos);
        EXPECT_NE(stmt.find("halide_cuda_run"), std::string::npos);
    }
}

}  // namespace
}  // namespace gsparse
