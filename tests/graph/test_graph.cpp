#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "graph/convert.h"
#include "graph/graph.h"
#include "graph/io.h"
#include "graph/validate.h"
#include "graph_test_util.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

TEST(Graph, DefaultIsEmpty) {
    const Graph g;
    EXPECT_EQ(g.num_dst(), 0);
    EXPECT_EQ(g.num_src(), 0);
    EXPECT_EQ(g.num_edges(), 0);
    EXPECT_FALSE(g.has_values());
    EXPECT_NO_THROW(validate(g.csr()));
    EXPECT_EQ(g.csc().col_ptr, (std::vector<index_t>{0}));
    EXPECT_TRUE(g.balanced_idx().empty());
    EXPECT_EQ(g.stats().nnz, 0);
    EXPECT_EQ(g.reverse().num_edges(), 0);
}

TEST(Graph, FromEdges) {
    // Edge i: src[i] -> dst[i].
    const Graph g = Graph::from_edges(4, {0, 2, 3, 2}, {1, 1, 0, 3}, {1.0f, 2.0f, 3.0f, 4.0f});
    EXPECT_EQ(g.num_dst(), 4);
    EXPECT_EQ(g.num_src(), 4);
    EXPECT_EQ(g.num_edges(), 4);
    EXPECT_TRUE(g.has_values());
    EXPECT_EQ(g.values(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(g.csr().row_ptr, (std::vector<index_t>{0, 1, 3, 3, 4}));
    EXPECT_EQ(edges_of(g.csr()), (EdgeMap{{1, 0}, {1, 2}, {0, 3}, {3, 2}}));
    EXPECT_EQ(g.max_row_length(), 2);
}

TEST(Graph, FromEdgesRejectsBadInput) {
    EXPECT_TRUE(throws_with<GraphError>([] { Graph::from_edges(3, {0, 3}, {1, 1}); }, {"src[1] = 3", "num_nodes = 3"}));
    EXPECT_TRUE(throws_with<GraphError>([] { Graph::from_edges(3, {0, 1}, {1, -1}); }, {"dst[1] = -1"}));
    EXPECT_TRUE(throws_with<GraphError>([] { Graph::from_edges(3, {0, 1}, {1}); },
                                        {"src has 2 entries but dst has 1"}));
    EXPECT_TRUE(throws_with<GraphError>([] { Graph::from_edges(-2, {}, {}); }, {"num_nodes = -2"}));
    EXPECT_TRUE(throws_with<GraphError>([] { Graph::from_edges(3, {0, 1}, {1, 2}, {1.0f}); },
                                        {"values has 1 entries", "nnz = 2"}));
}

TEST(Graph, FromCooValidates) {
    COO c;
    c.num_rows = 2;
    c.num_cols = 3;
    c.row = {1, 0};
    c.col = {2, 3};
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_coo(c); }, {"col[1] = 3"}));
    c.col = {2, 1};
    c.edge_ids = {1, 1};
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_coo(c); }, {"edge_ids[1] = 1 duplicates"}));
    c.edge_ids = {1, 0};
    const Graph g = Graph::from_coo(c);
    EXPECT_EQ(edges_of(g.csr()), (EdgeMap{{0, 1}, {1, 2}}));
}

TEST(Graph, FromCsrValidatesArraysAndValues) {
    CSR good = make_csr(2, 2, {0, 1, 2}, {1, 0});
    EXPECT_NO_THROW(Graph::from_csr(good, {0.5f, 0.25f}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr(good, {0.5f, 0.25f, 1.0f}); },
                                        {"values has 3 entries", "nnz = 2"}));
    CSR bad = make_csr(2, 2, {0, 2, 1}, {1, 0});
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr(bad); }, {"row_ptr[2] = 1 is less than row_ptr[1] = 2"}));
}

TEST(Graph, FromCsrArrays) {
    const index_t row_ptr[] = {0, 2, 2, 3};
    const index_t col_idx[] = {1, 0, 2};
    const index_t edge_ids[] = {2, 0, 1};
    const Graph g = Graph::from_csr_arrays(3, 3, row_ptr, col_idx, edge_ids, 3);
    EXPECT_EQ(g.csr().col_idx, (std::vector<index_t>{1, 0, 2}));
    EXPECT_EQ(g.csr().edge_ids, (std::vector<index_t>{2, 0, 1}));
    const Graph h = Graph::from_csr_arrays(3, 3, row_ptr, col_idx, nullptr, 3);
    EXPECT_TRUE(h.csr().identity_edge_ids());

    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, 3, row_ptr, col_idx, nullptr, 2); },
                                        {"row_ptr[3] = 3 does not equal nnz = 2"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, 3, row_ptr, col_idx, nullptr, int64_t{1} << 31); },
                                        {"nnz = 2147483648", "INT32_MAX"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(-1, 3, row_ptr, col_idx, nullptr, 3); },
                                        {"num_rows = -1"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, int64_t{1} << 32, row_ptr, col_idx, nullptr, 3); },
                                        {"num_cols = 4294967296"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, 3, nullptr, col_idx, nullptr, 3); },
                                        {"row_ptr is null"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, 3, row_ptr, nullptr, nullptr, 3); },
                                        {"col_idx is null"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, 2, row_ptr, col_idx, nullptr, 3); },
                                        {"col_idx[2] = 2", "num_cols = 2"}));
    const index_t dup_ids[] = {0, 0, 1};
    EXPECT_TRUE(throws_with<GraphError>([&] { Graph::from_csr_arrays(3, 3, row_ptr, col_idx, dup_ids, 3); },
                                        {"edge_ids[1] = 0 duplicates edge_ids[0] = 0"}));
}

TEST(Graph, DerivedLayoutsAgreeWithCsr) {
    RandomGraphOptions opt;
    opt.num_src = 90;
    const Graph g = random_graph(17, opt);
    const EdgeMap ref = edges_of(g.csr());
    EXPECT_EQ(edges_of(g.csc()), ref);
    const COO &coo = g.coo();
    ASSERT_EQ(coo.nnz(), g.num_edges());
    EXPECT_TRUE(coo.identity_edge_ids());
    for (int64_t e = 0; e < coo.nnz(); e++) {
        ASSERT_EQ(coo.row[e], ref[e].first);
        ASSERT_EQ(coo.col[e], ref[e].second);
    }
    const Graph &rev = g.reverse();
    EXPECT_EQ(rev.num_dst(), g.num_src());
    EXPECT_EQ(rev.num_src(), g.num_dst());
    const EdgeMap rm = edges_of(rev.csr());
    for (size_t e = 0; e < ref.size(); e++) EXPECT_EQ(rm[e], std::make_pair(ref[e].second, ref[e].first));
    EXPECT_EQ(g.balanced_idx(), balanced_index(g.csr()));
    const GraphStats s = compute_stats(g.csr());
    EXPECT_EQ(g.stats().max_row_length, s.max_row_length);
    EXPECT_DOUBLE_EQ(g.stats().row_length_cov, s.row_length_cov);
    // Cached: the same objects every time.
    EXPECT_EQ(&g.csc(), &g.csc());
    EXPECT_EQ(&g.reverse(), &g.reverse());
    EXPECT_EQ(&g.coo(), &g.coo());
}

TEST(Graph, ReverseKeepsValuesByEdgeId) {
    const Graph g = Graph::from_edges(3, {0, 1, 2}, {1, 2, 0}, {7.0f, 8.0f, 9.0f});
    const Graph &r = g.reverse();
    EXPECT_EQ(r.values(), g.values());
    EXPECT_EQ(edges_of(r.csr()), (EdgeMap{{0, 1}, {1, 2}, {2, 0}}));
    // Reversing twice gives back the edges of the original.
    EXPECT_EQ(edges_of(r.reverse().csr()), edges_of(g.csr()));
}

TEST(Graph, LazyCachesAreThreadSafe) {
    const Graph g = random_graph(23);
    std::vector<const CSC *> cscs(8);
    std::vector<const Graph *> revs(8);
    std::vector<uint64_t> fps(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; t++)
        threads.emplace_back([&, t] {
            cscs[t] = &g.csc();
            revs[t] = &g.reverse();
            fps[t] = g.fingerprint();
            g.balanced_idx();
            g.stats();
            g.coo();
        });
    for (auto &th : threads) th.join();
    for (int t = 1; t < 8; t++) {
        EXPECT_EQ(cscs[t], cscs[0]);
        EXPECT_EQ(revs[t], revs[0]);
        EXPECT_EQ(fps[t], fps[0]);
    }
    EXPECT_EQ(edges_of(*cscs[0]), edges_of(g.csr()));
}

TEST(Graph, Fingerprint) {
    const Graph a = random_graph(3);
    const Graph b = random_graph(3);
    const Graph c = random_graph(4);
    EXPECT_EQ(a.fingerprint(), b.fingerprint());
    EXPECT_NE(a.fingerprint(), c.fingerprint());
    const Graph copy = a;
    EXPECT_EQ(copy.fingerprint(), a.fingerprint());

    // One changed column, or a different shape with the same arrays, changes the fingerprint.
    CSR csr = a.csr();
    const uint64_t base = Graph::from_csr(csr).fingerprint();
    EXPECT_EQ(base, a.fingerprint());
    csr.col_idx[csr.col_idx.size() / 2] ^= 1;
    EXPECT_NE(Graph::from_csr(csr).fingerprint(), base);
    CSR wider = a.csr();
    wider.num_cols += 1;
    EXPECT_NE(Graph::from_csr(wider).fingerprint(), base);
    // Edge ids and values are not part of the structure.
    CSR ids = a.csr();
    ids.edge_ids.clear();
    std::vector<float> vals(static_cast<size_t>(ids.nnz()), 1.0f);
    EXPECT_EQ(Graph::from_csr(ids, vals).fingerprint(), base);
    // Small graphs that differ only in how edges split between rows.
    EXPECT_NE(Graph::from_csr(make_csr(2, 2, {0, 1, 2}, {0, 1})).fingerprint(),
              Graph::from_csr(make_csr(2, 2, {0, 2, 2}, {0, 1})).fingerprint());
    EXPECT_NE(Graph().fingerprint(), Graph::from_csr(make_csr(1, 1, {0, 0}, {})).fingerprint());
}

TEST(Graph, LoadFromEachFormat) {
    ScratchDir dir;
    const Graph g = Graph::from_edges(5, {0, 4, 2, 2}, {1, 1, 3, 0}, {0.5f, 1.5f, 2.5f, 3.5f});
    for (const char *name : {"g.mtx", "g.el", "g.gcsr", "g.txt"}) {
        SCOPED_TRACE(name);
        save_graph(dir.path(name), g.csr(), g.values());
        const Graph h = Graph::load(dir.path(name));
        EXPECT_EQ(h.num_dst(), 5);
        EXPECT_EQ(edges_of(h.csr()), edges_of(g.csr()));
        EXPECT_EQ(h.values(), g.values());
        EXPECT_EQ(h.fingerprint(), g.fingerprint());  // g's rows are already sorted
    }
    EXPECT_THROW(Graph::load(dir.path("missing.mtx")), FormatError);
}

TEST(Graph, LoadingADirectoryIsAFormatError) {
    ScratchDir dir;
    const std::string d = dir.path("sub.mtx");
    std::filesystem::create_directories(d);
    EXPECT_TRUE(throws_with<FormatError>([&] { load_matrix_market(d); }, {d, "directory"}));
    EXPECT_TRUE(throws_with<FormatError>([&] { load_edge_list(d); }, {"directory"}));
    EXPECT_TRUE(throws_with<FormatError>([&] { load_binary_csr(d); }, {"directory"}));
    EXPECT_THROW(Graph::load(d), FormatError);
}

}  // namespace
}  // namespace gsparse::test
