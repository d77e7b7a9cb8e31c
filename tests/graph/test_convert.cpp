#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "graph/convert.h"
#include "graph/validate.h"
#include "graph_test_util.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

COO small_coo() {
    // Edges in id order: 0: 2->1, 1: 0->3, 2: 1->1, 3: 3->0, 4: 0->1 (src->dst); 4 nodes.
    COO c;
    c.num_rows = 4;
    c.num_cols = 4;
    c.row = {1, 3, 1, 0, 1};
    c.col = {2, 0, 1, 3, 0};
    return c;
}

TEST(Convert, CooToCsrIsAStableCountingSort) {
    const CSR g = coo_to_csr(small_coo());
    EXPECT_EQ(g.num_rows, 4);
    EXPECT_EQ(g.num_cols, 4);
    EXPECT_EQ(g.row_ptr, (std::vector<index_t>{0, 1, 4, 4, 5}));
    EXPECT_EQ(g.col_idx, (std::vector<index_t>{3, 2, 1, 0, 0}));
    EXPECT_EQ(explicit_ids(g), (std::vector<index_t>{3, 0, 2, 4, 1}));
    EXPECT_NO_THROW(validate(g));
}

TEST(Convert, CooToCsrKeepsGivenEdgeIds) {
    COO c = small_coo();
    c.edge_ids = {0, 4, 3, 2, 1};
    const CSR g = coo_to_csr(c);
    EXPECT_EQ(explicit_ids(g), (std::vector<index_t>{2, 0, 3, 1, 4}));
    EXPECT_EQ(edges_of(g), edges_of(c));
}

TEST(Convert, CooToCsrOnRowSortedInputKeepsPositions) {
    COO c;
    c.num_rows = 3;
    c.num_cols = 3;
    c.row = {0, 0, 2};
    c.col = {2, 1, 0};
    const CSR g = coo_to_csr(c);
    EXPECT_EQ(g.row_ptr, (std::vector<index_t>{0, 2, 2, 3}));
    EXPECT_EQ(g.col_idx, (std::vector<index_t>{2, 1, 0}));
    EXPECT_EQ(explicit_ids(g), (std::vector<index_t>{0, 1, 2}));
}

TEST(Convert, RejectsInvalidInputInsteadOfCrashing) {
    COO c = small_coo();
    c.row[2] = 4;
    EXPECT_TRUE(throws_with<GraphError>([&] { coo_to_csr(c); }, {"row[2] = 4"}));
    CSR g = make_csr(2, 2, {0, 1, 3}, {0, 5, 1});
    EXPECT_TRUE(throws_with<GraphError>([&] { csr_to_csc(g); }, {"col_idx[1] = 5"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { transpose(g); }, {"col_idx[1] = 5"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { sort_rows(g); }, {"col_idx[1] = 5"}));
    g = make_csr(2, 2, {0, 1}, {0});
    EXPECT_TRUE(throws_with<GraphError>([&] { balanced_index(g); }, {"row_ptr has 2 entries"}));
    EXPECT_TRUE(throws_with<GraphError>([&] { compute_stats(g); }, {"row_ptr has 2 entries"}));
}

TEST(Convert, CsrToCscSmall) {
    const CSR g = coo_to_csr(small_coo());
    const CSC c = csr_to_csc(g);
    EXPECT_EQ(c.num_rows, 4);
    EXPECT_EQ(c.num_cols, 4);
    EXPECT_EQ(c.col_ptr, (std::vector<index_t>{0, 2, 3, 4, 5}));
    EXPECT_EQ(c.row_idx, (std::vector<index_t>{1, 3, 1, 1, 0}));
    // Column 0 holds edges 4 (0->1) and 1 (0->3) in row order.
    EXPECT_EQ(c.edge_id(0), 4);
    EXPECT_EQ(c.edge_id(1), 1);
    EXPECT_EQ(edges_of(c), edges_of(g));
}

TEST(Convert, CooInEdgeOrder) {
    const COO c = small_coo();
    const COO e = coo_in_edge_order(coo_to_csr(c));
    EXPECT_TRUE(e.identity_edge_ids());
    EXPECT_EQ(e.row, c.row);
    EXPECT_EQ(e.col, c.col);
}

TEST(Convert, LargeInputsConvertInParallelChunksAsInOnePass) {
    // Over a million nonzeros the conversions split the work into chunks, one per hardware thread;
    // the result is that of a sequential pass: rows expanded across chunk boundaries (empty rows
    // and a row longer than a chunk included), a stable order by source tile.
    CSR csr;
    csr.num_rows = 200000;
    csr.num_cols = 150001;
    csr.row_ptr.assign(1, 0);
    uint64_t state = 12345;
    auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
    for (int64_t r = 0; r < csr.num_rows; r++) {
        int64_t len = r % 7 == 3 ? 0 : int64_t(next() % 20);
        if (r == 120000) len = 1500000;  // longer than a chunk, across the middle
        std::vector<index_t> cols(static_cast<size_t>(len));
        for (auto &c : cols) c = static_cast<index_t>(next() % uint64_t(csr.num_cols));
        std::sort(cols.begin(), cols.end());
        csr.col_idx.insert(csr.col_idx.end(), cols.begin(), cols.end());
        csr.row_ptr.push_back(static_cast<index_t>(csr.col_idx.size()));
    }
    csr.edge_ids.resize(csr.col_idx.size());
    for (size_t i = 0; i < csr.edge_ids.size(); i++) csr.edge_ids[i] = static_cast<index_t>((i * 7919) % csr.edge_ids.size());
    ASSERT_GT(csr.col_idx.size(), size_t(2) << 20);
    const COO coo = csr_to_coo(csr);
    ASSERT_EQ(coo.row.size(), csr.col_idx.size());
    EXPECT_EQ(coo.col, csr.col_idx);
    EXPECT_EQ(coo.edge_ids, csr.edge_ids);
    size_t mismatched_rows = 0;
    for (int64_t r = 0; r < csr.num_rows; r++)
        for (int64_t i = csr.row_ptr[r]; i < csr.row_ptr[r + 1]; i++) mismatched_rows += coo.row[size_t(i)] != r;
    EXPECT_EQ(mismatched_rows, 0u);

    for (int64_t tile : {4096, 1000, 131072}) {
        std::vector<size_t> order(coo.col.size());
        std::iota(order.begin(), order.end(), size_t(0));
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return coo.col[a] / tile < coo.col[b] / tile; });
        const COO t = group_by_source_tiles(coo, tile);
        ASSERT_EQ(t.col.size(), order.size());
        size_t wrong = 0;
        for (size_t i = 0; i < order.size(); i++)
            wrong += t.row[i] != coo.row[order[i]] || t.col[i] != coo.col[order[i]] || t.edge_ids[i] != coo.edge_ids[order[i]];
        EXPECT_EQ(wrong, 0u) << "tile " << tile;
    }
}

TEST(Convert, GroupBySourceTilesOrdersByTileThenDestination) {
    test::RandomGraphOptions opt;
    opt.num_nodes = 300;
    opt.num_src = 250;
    opt.shuffle_edge_ids = true;
    Graph g = test::random_graph(71, opt);
    const COO &by_dst = g.coo_by_dst();
    std::vector<int64_t> dst_pos(static_cast<size_t>(by_dst.nnz()));
    for (int64_t i = 0; i < by_dst.nnz(); i++) dst_pos[by_dst.edge_ids[i]] = i;
    for (int64_t tile : {1, 64, 100, 256, 1 << 20}) {
        const COO t = group_by_source_tiles(by_dst, tile);
        ASSERT_EQ(t.nnz(), by_dst.nnz());
        EXPECT_EQ(t.num_rows, by_dst.num_rows);
        EXPECT_EQ(t.num_cols, by_dst.num_cols);
        // Ordered by (tile, destination), and stable: the edges of one (tile, destination) pair keep
        // their order in the destination order, so sorted rows stay sorted.
        for (int64_t i = 1; i < t.nnz(); i++) {
            const auto key = [&](int64_t k) { return std::pair{t.col[k] / tile, t.row[k]}; };
            ASSERT_LE(key(i - 1), key(i)) << "tile " << tile << " position " << i;
            if (key(i - 1) == key(i)) {
                EXPECT_LT(dst_pos[t.edge_ids[i - 1]], dst_pos[t.edge_ids[i]]);
            }
        }
        // Every edge once, with its own endpoints.
        std::vector<int> seen(static_cast<size_t>(t.nnz()), 0);
        for (int64_t i = 0; i < t.nnz(); i++) {
            const index_t id = t.edge_ids[i];
            ASSERT_GE(id, 0);
            ASSERT_LT(id, t.nnz());
            seen[id]++;
            const COO &by_id = g.coo();
            EXPECT_EQ(t.row[i], by_id.row[id]);
            EXPECT_EQ(t.col[i], by_id.col[id]);
        }
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })) << "tile " << tile;
    }
    // One tile covering every source is the destination order itself.
    EXPECT_EQ(group_by_source_tiles(by_dst, 1 << 20).edge_ids, by_dst.edge_ids);
    // The graph computes each tiled order once.
    EXPECT_EQ(&g.coo_by_dst(64), &g.coo_by_dst(64));
    EXPECT_EQ(&g.coo_by_dst(0), &g.coo_by_dst());
    EXPECT_TRUE(throws_with<GraphError>([&] { group_by_source_tiles(by_dst, 0); }, {"source tile 0"}));
    COO no_ids = by_dst;
    no_ids.edge_ids.clear();
    EXPECT_TRUE(throws_with<GraphError>([&] { group_by_source_tiles(no_ids, 64); }, {"edge id"}));
}

TEST(Convert, CooInEdgeOrderRejectsNonPermutation) {
    CSR g = coo_to_csr(small_coo());
    g.edge_ids = {0, 1, 1, 3, 4};
    EXPECT_TRUE(throws_with<GraphError>([&] { coo_in_edge_order(g); }, {"edge_ids[2] = 1 duplicates"}));
    g.edge_ids = {0, 1, 7, 3, 4};
    EXPECT_TRUE(throws_with<GraphError>([&] { coo_in_edge_order(g); }, {"edge_ids[2] = 7"}));
}

TEST(Convert, SortRowsIsStableAndMovesEdgeIds) {
    CSR g = make_csr(3, 6, {0, 4, 4, 7}, {5, 2, 5, 1, 3, 0, 3});
    sort_rows(g);
    EXPECT_EQ(g.col_idx, (std::vector<index_t>{1, 2, 5, 5, 0, 3, 3}));
    // The two 5s of row 0 keep their order (ids 0 then 2); the two 3s of row 2 too (4 then 6).
    EXPECT_EQ(g.edge_ids, (std::vector<index_t>{3, 1, 0, 2, 5, 4, 6}));
    EXPECT_NO_THROW(validate_sorted_rows(g));
    EXPECT_NO_THROW(validate(g));
}

TEST(Convert, SortRowsLeavesSortedIdentityGraphsAlone) {
    CSR g = make_csr(2, 3, {0, 2, 3}, {0, 2, 1});
    sort_rows(g);
    EXPECT_TRUE(g.identity_edge_ids());
    EXPECT_EQ(g.col_idx, (std::vector<index_t>{0, 2, 1}));
}

TEST(Convert, SortRowsLongRow) {
    // A row longer than the insertion-sort cutoff, with many duplicates.
    const int n = 1000;
    CSR g;
    g.num_rows = 1;
    g.num_cols = 17;
    g.row_ptr = {0, n};
    for (int i = 0; i < n; i++) g.col_idx.push_back((i * 7919) % 17);
    const EdgeMap before = edges_of(g);
    sort_rows(g);
    EXPECT_TRUE(std::is_sorted(g.col_idx.begin(), g.col_idx.end()));
    EXPECT_EQ(edges_of(g), before);
    for (int i = 1; i < n; i++)
        if (g.col_idx[i] == g.col_idx[i - 1]) {
            EXPECT_LT(g.edge_ids[i - 1], g.edge_ids[i]) << "unstable at " << i;
        }
}

TEST(Convert, BalancedIndexSmall) {
    // Row lengths: 2, 0, 3, 2, 3, 1.
    const CSR g = make_csr(6, 2, {0, 2, 2, 5, 7, 10, 11}, {0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1});
    EXPECT_EQ(balanced_index(g), (std::vector<index_t>{2, 4, 0, 3, 5, 1}));
    EXPECT_TRUE(balanced_index(make_csr(0, 0, {0}, {})).empty());
}

void check_balanced(const CSR &g) {
    const std::vector<index_t> idx = balanced_index(g);
    ASSERT_NO_THROW(validate_permutation(idx, g.num_rows, "balancedIdx"));
    for (size_t i = 1; i < idx.size(); i++) {
        const int64_t a = g.row_length(idx[i - 1]), b = g.row_length(idx[i]);
        ASSERT_GE(a, b) << "at " << i;
        if (a == b) {
            ASSERT_LT(idx[i - 1], idx[i]) << "tie order at " << i;
        }
    }
}

TEST(Convert, BalancedIndexRandomGraphs) {
    for (uint64_t seed = 1; seed <= 5; seed++) check_balanced(random_graph(seed).csr());
}

TEST(Convert, BalancedIndexRowsLongerThan16Bits) {
    // Lengths beyond 65535 exercise the second radix pass.
    const std::vector<int64_t> lengths = {70000, 3, 131072, 65536, 0, 65535, 131073, 3, 70000};
    CSR g;
    g.num_rows = static_cast<int64_t>(lengths.size());
    g.num_cols = 1;
    g.row_ptr = {0};
    for (int64_t len : lengths) g.row_ptr.push_back(static_cast<index_t>(g.row_ptr.back() + len));
    g.col_idx.assign(static_cast<size_t>(g.row_ptr.back()), 0);
    EXPECT_EQ(balanced_index(g), (std::vector<index_t>{6, 2, 0, 8, 3, 5, 1, 7, 4}));
    check_balanced(g);
}

TEST(Convert, StatsOfKnownGraph) {
    // Row lengths 3, 0, 1, 2: mean 1.5, population variance 1.25.
    const CSR g = make_csr(4, 7, {0, 3, 3, 4, 6}, {0, 1, 2, 3, 4, 6});
    const GraphStats s = compute_stats(g);
    EXPECT_EQ(s.num_rows, 4);
    EXPECT_EQ(s.num_cols, 7);
    EXPECT_EQ(s.nnz, 6);
    EXPECT_DOUBLE_EQ(s.avg_row_length, 1.5);
    EXPECT_EQ(s.max_row_length, 3);
    EXPECT_EQ(s.empty_rows, 1);
    EXPECT_NEAR(s.row_length_cov, std::sqrt(1.25) / 1.5, 1e-12);
    // Columns 0-4 and 6 once, column 5 never: mean 6/7, population standard deviation sqrt(6) / 7.
    EXPECT_EQ(s.max_col_length, 1);
    EXPECT_EQ(s.empty_cols, 1);
    EXPECT_NEAR(s.col_length_cov, std::sqrt(6.0) / 6.0, 1e-12);
}

TEST(Convert, StatsOfRegularAndEmptyGraphs) {
    const GraphStats r = compute_stats(make_csr(3, 3, {0, 2, 4, 6}, {0, 1, 1, 2, 0, 2}));
    EXPECT_DOUBLE_EQ(r.avg_row_length, 2.0);
    EXPECT_DOUBLE_EQ(r.row_length_cov, 0.0);
    EXPECT_EQ(r.empty_rows, 0);
    const GraphStats e = compute_stats(make_csr(5, 5, {0, 0, 0, 0, 0, 0}, {}));
    EXPECT_EQ(e.nnz, 0);
    EXPECT_EQ(e.empty_rows, 5);
    EXPECT_EQ(e.empty_cols, 5);
    EXPECT_DOUBLE_EQ(e.col_length_cov, 0.0);
    EXPECT_DOUBLE_EQ(e.avg_row_length, 0.0);
    EXPECT_DOUBLE_EQ(e.row_length_cov, 0.0);
    const GraphStats z = compute_stats(make_csr(0, 0, {0}, {}));
    EXPECT_EQ(z.num_rows, 0);
    EXPECT_DOUBLE_EQ(z.row_length_cov, 0.0);
}

/// All layouts of a random graph agree edge by edge.
void check_conversions(const CSR &csr) {
    ASSERT_NO_THROW(validate(csr));
    const EdgeMap ref = edges_of(csr);

    const CSC csc = csr_to_csc(csr);
    ASSERT_NO_THROW(validate(csc));
    EXPECT_EQ(edges_of(csc), ref);

    const COO coo = csr_to_coo(csr);
    ASSERT_NO_THROW(validate(coo));
    EXPECT_EQ(edges_of(coo), ref);

    const COO ordered = coo_in_edge_order(csr);
    ASSERT_TRUE(ordered.identity_edge_ids());
    for (int64_t e = 0; e < ordered.nnz(); e++) {
        ASSERT_EQ(ordered.row[e], ref[e].first) << "edge " << e;
        ASSERT_EQ(ordered.col[e], ref[e].second) << "edge " << e;
    }

    const CSR t = transpose(csr);
    ASSERT_NO_THROW(validate(t));
    EXPECT_EQ(t.num_rows, csr.num_cols);
    EXPECT_EQ(t.num_cols, csr.num_rows);
    const EdgeMap rev = edges_of(t);
    for (size_t e = 0; e < ref.size(); e++) {
        ASSERT_EQ(rev[e].first, ref[e].second) << "edge " << e;
        ASSERT_EQ(rev[e].second, ref[e].first) << "edge " << e;
    }

    // Back and forth: rows come out sorted (stably), which is exactly sort_rows of the original.
    CSR sorted = csr;
    sort_rows(sorted);
    EXPECT_EQ(edges_of(sorted), ref);
    ASSERT_NO_THROW(validate_sorted_rows(sorted));
    expect_same_csr(csc_to_csr(csc), sorted);
    expect_same_csr(transpose(t), sorted);
    expect_same_csr(coo_to_csr(coo), csr);
}

TEST(Convert, RandomGraphsKeepEdgeIds) {
    for (uint64_t seed = 11; seed <= 16; seed++) {
        SCOPED_TRACE(seed);
        check_conversions(random_graph(seed).csr());
    }
}

TEST(Convert, RandomBipartiteGraphsKeepEdgeIds) {
    RandomGraphOptions opt;
    opt.num_nodes = 120;
    opt.num_src = 45;
    for (uint64_t seed = 21; seed <= 24; seed++) {
        SCOPED_TRACE(seed);
        const CSR g = random_graph(seed, opt).csr();
        EXPECT_EQ(g.num_rows, 120);
        EXPECT_EQ(g.num_cols, 45);
        check_conversions(g);
    }
}

TEST(Convert, IdentityEdgeIdGraphs) {
    RandomGraphOptions opt;
    opt.shuffle_edge_ids = false;
    CSR g = random_graph(31, opt).csr();
    g.edge_ids.clear();  // rows as generated, ids = positions
    check_conversions(g);
}

TEST(Convert, EmptyGraphs) {
    check_conversions(make_csr(0, 0, {0}, {}));
    check_conversions(make_csr(4, 2, {0, 0, 0, 0, 0}, {}));
}

}  // namespace
}  // namespace gsparse::test
