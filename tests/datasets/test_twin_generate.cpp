// Generated twins: sizes, row-length spread, structure, determinism, communities and source skew.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "twin/twin.h"
#include "twin_test_util.h"

namespace gsparse::datasets {
namespace {

using test::row_shape;
using test::structure_problem;

TwinOptions scaled(double scale, uint64_t seed = 1) {
    TwinOptions o;
    o.scale = scale;
    o.seed = seed;
    return o;
}

struct ScaleCase {
    const char *name;
    double scale;
};

class TwinAtScale : public ::testing::TestWithParam<ScaleCase> {};

TEST_P(TwinAtScale, ExactSizesTargetSpreadAndValidStructure) {
    const TwinSpec spec = twin_spec(GetParam().name);
    const double scale = GetParam().scale;
    const TwinGraph g = generate_twin_graph(spec, scaled(scale));
    const int64_t nodes = std::llround(spec.nodes * scale);
    const int64_t edges = std::llround(spec.edges * scale);
    ASSERT_LE(edges / nodes, nodes / 4) << "pick a scale where the average is not capped";
    EXPECT_EQ(g.csr.num_rows, nodes);
    EXPECT_EQ(g.csr.num_cols, nodes);
    EXPECT_EQ(g.csr.nnz(), edges);
    EXPECT_EQ(g.spec.nodes, nodes);
    EXPECT_EQ(g.spec.edges, edges);
    EXPECT_EQ(structure_problem(g.csr), "");
    const auto shape = row_shape(g.csr);
    EXPECT_NEAR(shape.cov, spec.cov, 0.05 * spec.cov) << spec.name << " at scale " << scale;
    EXPECT_LE(shape.max, nodes);
    EXPECT_GT(shape.max, 3 * shape.mean) << "a heavy tail has rows far above the mean";
}

INSTANTIATE_TEST_SUITE_P(Twins, TwinAtScale,
                         ::testing::Values(ScaleCase{"reddit", 0.01}, ScaleCase{"reddit", 0.03},
                                           ScaleCase{"ogbn-proteins", 0.05}, ScaleCase{"ogbn-products", 0.01}),
                         [](const auto &info) {
                             std::string s = std::string(info.param.name) + "_" +
                                             std::to_string(static_cast<int>(info.param.scale * 1000));
                             std::replace(s.begin(), s.end(), '-', '_');
                             return s;
                         });

TEST(Twin, AverageIsCappedAtAQuarterOfTheNodes) {
    // ogbn-proteins at 1%: 1325 nodes, 791,225 edges would average 597 > 1325 / 4 = 331.
    const TwinSpec spec = twin_spec("ogbn-proteins");
    const TwinSpec r = resolve_twin(spec, scaled(0.01));
    EXPECT_EQ(r.nodes, 1325);
    EXPECT_EQ(r.edges, 1325 * 331);
    const CSR g = generate_twin(spec, scaled(0.01));
    EXPECT_EQ(g.nnz(), 1325 * 331);
    EXPECT_EQ(structure_problem(g), "");
}

TEST(Twin, TinyScalesStayValid) {
    // Rows as long as the node count (the fill path) and the smallest possible graph.
    for (double scale : {0.0002, 0.00005, 1e-7}) {
        for (const auto &name : twin_names()) {
            const TwinSpec spec = twin_spec(name);
            const TwinGraph g = generate_twin_graph(spec, scaled(scale));
            const int64_t nodes = std::max<int64_t>(1, std::llround(spec.nodes * scale));
            EXPECT_EQ(g.csr.num_rows, nodes) << name << " " << scale;
            EXPECT_EQ(g.csr.nnz(), std::min<int64_t>(std::llround(spec.edges * scale),
                                                     nodes * std::max<int64_t>(1, nodes / 4)));
            EXPECT_EQ(structure_problem(g.csr), "") << name << " " << scale;
        }
    }
}

TEST(Twin, ExtremeCommunityOptionsStayValid) {
    const TwinSpec spec = twin_spec("reddit");
    for (double intra : {0.0, 1.0}) {
        for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{2330}}) {
            TwinOptions o = scaled(0.01);
            o.intra = intra;
            o.communities = k;
            const TwinGraph g = generate_twin_graph(spec, o);
            EXPECT_EQ(g.csr.nnz(), std::llround(spec.edges * 0.01));
            EXPECT_EQ(structure_problem(g.csr), "") << "intra " << intra << " communities " << k;
            EXPECT_EQ(g.community_start.size(), static_cast<size_t>(k) + 1);
        }
    }
}

TEST(Twin, SameSeedSameGraphAtAnyThreadCount) {
    const TwinSpec spec = twin_spec("reddit");
    TwinOptions o = scaled(0.01, 7);
    o.threads = 1;
    const CSR a = generate_twin(spec, o);
    for (int t : {2, 3, 8}) {
        o.threads = t;
        const CSR b = generate_twin(spec, o);
        EXPECT_EQ(a.row_ptr, b.row_ptr) << t << " threads";
        EXPECT_EQ(a.col_idx, b.col_idx) << t << " threads";
    }
    o.threads = 0;
    EXPECT_EQ(a.col_idx, generate_twin(spec, o).col_idx);
}

TEST(Twin, ProgressCountsEveryRowAndEdgeAndLeavesTheGraphAlone) {
    const TwinSpec spec = twin_spec("reddit");
    TwinOptions o = scaled(0.01, 7);
    o.threads = 3;
    const CSR plain = generate_twin(spec, o);
    std::vector<TwinProgress> seen;
    o.progress = [&seen](const TwinProgress &p) { seen.push_back(p); };  // one call at a time
    const CSR watched = generate_twin(spec, o);
    EXPECT_EQ(plain.row_ptr, watched.row_ptr);
    EXPECT_EQ(plain.col_idx, watched.col_idx);
    ASSERT_FALSE(seen.empty());
    for (size_t i = 1; i < seen.size(); i++) {
        EXPECT_GT(seen[i].rows_done, seen[i - 1].rows_done);
        EXPECT_GE(seen[i].edges_done, seen[i - 1].edges_done);
    }
    EXPECT_EQ(seen.back().rows, plain.num_rows);
    EXPECT_EQ(seen.back().rows_done, plain.num_rows);
    EXPECT_EQ(seen.back().edges, plain.nnz());
    EXPECT_EQ(seen.back().edges_done, plain.nnz());
}

TEST(Twin, DifferentSeedDifferentGraph) {
    const TwinSpec spec = twin_spec("ogbn-products");
    const CSR a = generate_twin(spec, scaled(0.005, 1));
    const CSR b = generate_twin(spec, scaled(0.005, 2));
    ASSERT_EQ(a.nnz(), b.nnz());
    EXPECT_NE(a.row_ptr, b.row_ptr);
    EXPECT_NE(a.col_idx, b.col_idx);
    // The row-length distribution (as a multiset) is a property of the sizes, not of the seed.
    std::vector<int64_t> la, lb;
    for (int64_t v = 0; v < a.num_rows; v++) la.push_back(a.row_length(v)), lb.push_back(b.row_length(v));
    std::sort(la.begin(), la.end());
    std::sort(lb.begin(), lb.end());
    EXPECT_EQ(la, lb);
}

class BothOrders : public ::testing::TestWithParam<ScaleCase> {};

TEST_P(BothOrders, AreTheSameGraphUpToRelabeling) {
    const TwinSpec spec = twin_spec(GetParam().name);
    TwinOptions o = scaled(GetParam().scale, 3);
    o.order = NodeOrder::community;
    const TwinGraph c = generate_twin_graph(spec, o);
    o.order = NodeOrder::shuffled;
    const TwinGraph s = generate_twin_graph(spec, o);
    ASSERT_EQ(c.csr.nnz(), s.csr.nnz());
    for (int64_t i = 0; i < c.csr.num_rows; i++) EXPECT_EQ(c.relabel[i], i);
    // relabel is a permutation that is not the identity.
    std::vector<index_t> sorted = s.relabel;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < s.csr.num_rows; i++) ASSERT_EQ(sorted[i], i);
    EXPECT_NE(sorted, s.relabel);
    int64_t mismatched_rows = 0;
    for (int64_t i = 0; i < c.csr.num_rows; i++) {
        std::vector<index_t> expect;
        for (int64_t p = c.csr.row_ptr[i]; p < c.csr.row_ptr[i + 1]; p++) expect.push_back(s.relabel[c.csr.col_idx[p]]);
        std::sort(expect.begin(), expect.end());
        const index_t v = s.relabel[i];
        const std::vector<index_t> got(s.csr.col_idx.begin() + s.csr.row_ptr[v],
                                       s.csr.col_idx.begin() + s.csr.row_ptr[v + 1]);
        mismatched_rows += got != expect;
        EXPECT_EQ(s.community[v], c.community[i]);
    }
    EXPECT_EQ(mismatched_rows, 0);
}

// Products: sparse rows; reddit at 0.2%: dense rows that need the fallback fill.
INSTANTIATE_TEST_SUITE_P(Twins, BothOrders,
                         ::testing::Values(ScaleCase{"ogbn-products", 0.005}, ScaleCase{"reddit", 0.002}),
                         [](const auto &info) {
                             std::string s = info.param.name;
                             std::replace(s.begin(), s.end(), '-', '_');
                             return s;
                         });

/// Share of the entries whose source is in the row's community, over the rows of length >= 10 that
/// are shorter than a quarter of their community (longer rows can exhaust it).
double intra_share(const TwinGraph &g) {
    std::vector<int64_t> size(g.community_start.size() - 1);
    for (size_t c = 0; c < size.size(); c++) size[c] = g.community_start[c + 1] - g.community_start[c];
    int64_t in = 0, all = 0;
    for (int64_t v = 0; v < g.csr.num_rows; v++) {
        const int64_t len = g.csr.row_length(v);
        if (len < 10 || len > size[g.community[v]] / 4) continue;
        all += len;
        for (int64_t p = g.csr.row_ptr[v]; p < g.csr.row_ptr[v + 1]; p++) in += g.community[g.csr.col_idx[p]] == g.community[v];
    }
    return static_cast<double>(in) / static_cast<double>(all);
}

TEST(Twin, CommunityOrderKeepsRowsInsideAContiguousIdRange) {
    const TwinSpec spec = twin_spec("ogbn-products");
    TwinOptions o = scaled(0.01);
    o.order = NodeOrder::community;
    o.intra = 0.9;
    const TwinGraph g = generate_twin_graph(spec, o);
    ASSERT_EQ(g.community_start.size(), 48u);
    // Community labels are contiguous id ranges, in order, and of varied sizes.
    int64_t smallest = g.csr.num_rows, largest = 0;
    for (int64_t c = 0; c + 1 < static_cast<int64_t>(g.community_start.size()); c++) {
        const int64_t b = g.community_start[c], e = g.community_start[c + 1];
        ASSERT_LT(b, e);
        smallest = std::min(smallest, e - b), largest = std::max(largest, e - b);
        for (int64_t v = b; v < e; v++) ASSERT_EQ(g.community[v], c);
    }
    EXPECT_GT(largest, 3 * smallest);
    // Rows of moderate length have most of their sources inside their community's id range.
    int64_t rows = 0, local_rows = 0;
    for (int64_t v = 0; v < g.csr.num_rows; v++) {
        const int64_t len = g.csr.row_length(v);
        if (len < 10) continue;
        const int64_t c = g.community[v], b = g.community_start[c], e = g.community_start[c + 1];
        if (len > (e - b) / 4) continue;  // rows that could exhaust their community
        int64_t inside = 0;
        for (int64_t p = g.csr.row_ptr[v]; p < g.csr.row_ptr[v + 1]; p++) inside += g.csr.col_idx[p] >= b && g.csr.col_idx[p] < e;
        rows++;
        local_rows += inside >= 0.7 * len;
    }
    ASSERT_GT(rows, 1000);
    EXPECT_GT(static_cast<double>(local_rows) / rows, 0.9);
    EXPECT_GT(intra_share(g), 0.85);
}

TEST(Twin, IntraControlsTheCommunityShare) {
    const TwinSpec spec = twin_spec("ogbn-products");
    TwinOptions o = scaled(0.005);
    o.intra = 0.0;
    const double none = intra_share(generate_twin_graph(spec, o));
    o.intra = 0.5;
    const double half = intra_share(generate_twin_graph(spec, o));
    o.intra = 1.0;
    const double all = intra_share(generate_twin_graph(spec, o));
    std::printf("intra share at P = 0, 0.5, 1: %.3f %.3f %.3f\n", none, half, all);
    EXPECT_LT(none, 0.15);  // chance level: the communities' weight shares
    EXPECT_GT(half, 0.45);
    EXPECT_LT(half, 0.65);
    EXPECT_GT(all, 0.95);
}

TEST(Twin, ShuffledOrderScattersCommunities) {
    const TwinGraph g = generate_twin_graph(twin_spec("ogbn-products"), scaled(0.005));
    // Consecutive ids rarely share a community, unlike the community order.
    int64_t same = 0;
    for (int64_t v = 1; v < g.csr.num_rows; v++) same += g.community[v] == g.community[v - 1];
    EXPECT_LT(static_cast<double>(same) / g.csr.num_rows, 0.2);
}

TEST(Twin, SourcesAreSkewedTowardsHighDegreeNodes) {
    const CSR g = generate_twin(twin_spec("ogbn-products"), scaled(0.01));
    const int64_t n = g.num_rows;
    std::vector<int64_t> out_count(n, 0);
    for (index_t u : g.col_idx) out_count[u]++;
    std::vector<index_t> by_degree(n);
    std::iota(by_degree.begin(), by_degree.end(), 0);
    std::sort(by_degree.begin(), by_degree.end(), [&](index_t a, index_t b) { return g.row_length(a) > g.row_length(b); });
    const int64_t top = n / 100;
    int64_t top_sources = 0, top_rows = 0;
    for (int64_t k = 0; k < top; k++) top_sources += out_count[by_degree[k]], top_rows += g.row_length(by_degree[k]);
    const double source_share = static_cast<double>(top_sources) / g.nnz();
    const double degree_share = static_cast<double>(top_rows) / g.nnz();
    std::printf("top 1%%: %.3f of the sources, %.3f of the entries\n", source_share, degree_share);
    EXPECT_GT(source_share, 0.05) << "the top 1% of nodes by degree should be far more than 1% of the sources";
    EXPECT_GT(source_share, 0.5 * degree_share);
    // The lowest-degree half of the nodes is under-represented as sources.
    int64_t bottom_sources = 0;
    for (int64_t k = n / 2; k < n; k++) bottom_sources += out_count[by_degree[k]];
    EXPECT_LT(static_cast<double>(bottom_sources) / g.nnz(), 0.25);
}

TEST(Twin, SelfLoopsAreRareButAllowed) {
    const CSR g = generate_twin(twin_spec("reddit"), scaled(0.01));
    int64_t loops = 0;
    for (int64_t v = 0; v < g.num_rows; v++)
        loops += std::binary_search(g.col_idx.begin() + g.row_ptr[v], g.col_idx.begin() + g.row_ptr[v + 1], v);
    EXPECT_LT(loops, g.num_rows / 2);
}

}  // namespace
}  // namespace gsparse::datasets
