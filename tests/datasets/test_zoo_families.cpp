// The zoo's families: exact sizes, valid CSR, determinism under a seed (and across thread counts),
// and each family's own invariants, on small graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <queue>

#include "graph/convert.h"
#include "twin/twin.h"
#include "zoo/families.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace gsparse::datasets::zoo {
namespace {

using test::csr_problem;
using test::duplicates;
using test::max_row;
using test::out_degrees;
using test::same_graph;
using test::self_loops;
using test::symmetric;

/// Generates family with params under seeds 1 (twice, with 1 and 2 threads) and 2: the first two
/// must be identical, the third different. Returns the seed-1 graph.
ZooGraph deterministic(const std::string &family, const ZooParams &params) {
    ZooGraph a = generate_zoo(family, params, 1, 1);
    const ZooGraph b = generate_zoo(family, params, 1, 2);
    const ZooGraph c = generate_zoo(family, params, 2, 2);
    EXPECT_TRUE(same_graph(a.csr, b.csr)) << family << ": same seed, different thread count, different graph";
    EXPECT_EQ(a.graph_start, b.graph_start);
    EXPECT_FALSE(same_graph(a.csr, c.csr)) << family << ": another seed gave the same graph";
    EXPECT_EQ(csr_problem(a.csr), "") << family;
    return a;
}

TEST(ZooChungLu, ExactSizeSimpleAndSkewed) {
    const ZooGraph g = deterministic("chung-lu", {{"nodes", "20000"}, {"edges", "200000"},
                                                  {"in-exponent", "2.1"}, {"out-exponent", "2.3"}});
    EXPECT_EQ(g.csr.num_rows, 20000);
    EXPECT_EQ(g.csr.num_cols, 20000);
    EXPECT_EQ(g.csr.nnz(), 200000);
    EXPECT_EQ(self_loops(g.csr), 0);
    EXPECT_EQ(duplicates(g.csr), 0);
    const GraphStats s = compute_stats(g.csr);
    EXPECT_GT(s.max_row_length, 20 * s.avg_row_length) << "heavy-tailed in-degrees";
    EXPECT_GT(s.max_col_length, 20 * s.avg_row_length) << "heavy-tailed out-degrees";
    EXPECT_GT(s.row_length_cov, 2.0);
    EXPECT_GT(s.col_length_cov, 2.0);
}

TEST(ZooChungLu, MaxDegreeLimitsTheLargestRows) {
    ChungLuSpec s;
    s.nodes = 20000;
    s.edges = 200000;
    s.in_exponent = 2.1;
    s.max_in_degree = 300;
    const CSR g = generate_chung_lu(s, 5);
    EXPECT_EQ(g.nnz(), 200000);
    // Multinomial counts around an expected 300: far below the unlimited graph's largest row.
    EXPECT_LE(max_row(g), 300 + 6 * std::sqrt(300.0));
    EXPECT_GE(max_row(g), 300 - 6 * std::sqrt(300.0));
}

TEST(ZooChungLu, ExponentsSetTheSkew) {
    // A steeper power law has a thinner tail.
    ChungLuSpec s;
    s.nodes = 20000;
    s.edges = 200000;
    s.in_exponent = 2.0;
    const double heavy = compute_stats(generate_chung_lu(s, 3)).row_length_cov;
    s.in_exponent = 3.5;
    const double light = compute_stats(generate_chung_lu(s, 3)).row_length_cov;
    EXPECT_GT(heavy, 2 * light);
}

TEST(ZooBipartite, RectangularWithEitherSideSkewed) {
    const ZooGraph g = deterministic("bipartite", {{"dst-nodes", "3000"}, {"src-nodes", "20000"}, {"edges", "60000"},
                                                   {"in-exponent", "0"}, {"out-exponent", "2.2"}});
    EXPECT_EQ(g.csr.num_rows, 3000);
    EXPECT_EQ(g.csr.num_cols, 20000);
    EXPECT_EQ(g.csr.nnz(), 60000);
    EXPECT_EQ(duplicates(g.csr), 0);
    const GraphStats s = compute_stats(g.csr);
    EXPECT_LT(s.row_length_cov, 0.5) << "uniform rows: multinomial lengths around 20";
    EXPECT_GT(s.col_length_cov, 2.0) << "power-law sources";
    // The other way round: skewed rows, uniform sources.
    BipartiteSpec b;
    b.dst_nodes = 20000;
    b.src_nodes = 3000;
    b.edges = 60000;
    b.in_exponent = 2.2;
    b.out_exponent = 0;
    const GraphStats t = compute_stats(generate_bipartite(b, 1));
    EXPECT_EQ(t.num_rows, 20000);
    EXPECT_EQ(t.num_cols, 3000);
    EXPECT_GT(t.row_length_cov, 2.0);
    EXPECT_LT(t.col_length_cov, 0.5);
}

TEST(ZooRmat, Graph500SizesSimpleAndSkewed) {
    const ZooGraph g = deterministic("rmat", {{"scale", "12"}, {"edge-factor", "8"}});
    EXPECT_EQ(g.csr.num_rows, 4096);
    EXPECT_EQ(g.csr.nnz(), 8 * 4096);
    EXPECT_EQ(self_loops(g.csr), 0);
    EXPECT_EQ(duplicates(g.csr), 0);
    const GraphStats s = compute_stats(g.csr);
    EXPECT_GT(s.max_row_length, 10 * s.avg_row_length);
    EXPECT_GT(s.max_col_length, 10 * s.avg_row_length);
    EXPECT_GT(s.empty_rows, 0) << "Kronecker graphs leave many nodes without edges";
}

TEST(ZooRmat, NaturalOrderPutsTheDensestNodeFirstAndNodesNeedNotBeAPowerOfTwo) {
    RmatSpec s;
    s.nodes = 3000;
    s.edges = 30000;
    s.shuffle = false;
    const CSR g = generate_rmat(s, 7);
    EXPECT_EQ(csr_problem(g), "");
    EXPECT_EQ(g.num_rows, 3000);
    EXPECT_EQ(g.nnz(), 30000);
    EXPECT_EQ(g.row_length(0), max_row(g));
    const std::vector<int64_t> out = out_degrees(g);
    EXPECT_EQ(out[0], *std::max_element(out.begin(), out.end()));
}

TEST(ZooRmat, MultigraphKeepsRepeatedEdges) {
    RmatSpec s;
    s.nodes = 1024;
    s.edges = 40000;
    s.simple = false;
    const CSR g = generate_rmat(s, 1);
    EXPECT_EQ(csr_problem(g), "");
    EXPECT_EQ(g.nnz(), 40000);
    EXPECT_GT(duplicates(g) + self_loops(g), 0);
}

TEST(ZooLattice, AverageDegreeBoundedDegreeLocalAndSymmetric) {
    for (const char *degree : {"2.6", "4", "6"}) {
        const ZooGraph g = deterministic("lattice", {{"nodes", "10000"}, {"degree", degree}});
        const double d = std::stod(degree);
        EXPECT_EQ(g.csr.nnz(), 2 * std::llround(d * 10000 / 2)) << degree;
        EXPECT_NEAR(static_cast<double>(g.csr.nnz()) / 10000, d, 0.01) << degree;
        EXPECT_TRUE(symmetric(g.csr)) << degree;
        EXPECT_EQ(self_loops(g.csr), 0);
        EXPECT_EQ(duplicates(g.csr), 0);
        EXPECT_LE(max_row(g.csr), 8);
        // Natural order: neighbours are grid neighbours (width 100).
        for (int64_t v = 0; v < g.csr.num_rows; v++)
            for (int64_t p = g.csr.row_ptr[v]; p < g.csr.row_ptr[v + 1]; p++) {
                const int64_t u = g.csr.col_idx[p];
                ASSERT_LE(std::abs(u / 100 - v / 100), 1);
                ASSERT_LE(std::abs(u % 100 - v % 100), 1);
            }
    }
}

TEST(ZooLattice, RoadLikeDegreesHaveChainsAndDeadEnds) {
    LatticeSpec s;
    s.nodes = 40000;
    s.edges = 2 * 54000;  // average degree 2.7
    const CSR g = generate_lattice(s, 3);
    std::vector<int64_t> count(9, 0);
    for (int64_t v = 0; v < g.num_rows; v++) count[g.row_length(v)]++;
    EXPECT_GT(count[1], 0);
    EXPECT_GT(count[2], count[4]);
    EXPECT_EQ(count[5] + count[6] + count[7] + count[8], 0) << "below degree 4 only axis edges are kept";
}

TEST(ZooLattice, ShuffledIsTheSameGraphRelabeled) {
    LatticeSpec s;
    s.nodes = 5000;
    s.edges = 14000;
    const CSR a = generate_lattice(s, 9);
    s.shuffle = true;
    const CSR b = generate_lattice(s, 9);
    EXPECT_EQ(csr_problem(b), "");
    EXPECT_TRUE(symmetric(b));
    std::vector<int64_t> da, db;
    for (int64_t v = 0; v < 5000; v++) da.push_back(a.row_length(v)), db.push_back(b.row_length(v));
    std::sort(da.begin(), da.end());
    std::sort(db.begin(), db.end());
    EXPECT_EQ(da, db);
    EXPECT_NE(a.col_idx, b.col_idx);
}

TEST(ZooKnn, EveryRowHasExactlyKNearestNeighbours) {
    for (int64_t dim : {2, 3}) {
        const ZooGraph g = deterministic("knn", {{"nodes", "800"}, {"k", "7"}, {"dim", std::to_string(dim)}});
        const CSR &c = g.csr;
        EXPECT_EQ(c.nnz(), 800 * 7);
        EXPECT_EQ(self_loops(c), 0);
        EXPECT_EQ(duplicates(c), 0);
        for (int64_t v = 0; v < c.num_rows; v++) ASSERT_EQ(c.row_length(v), 7);
        // Brute force on the same points.
        KnnSpec s;
        s.nodes = 800;
        s.k = 7;
        s.dim = dim;
        const std::vector<double> x = knn_points(s, 1);
        for (int64_t v = 0; v < 800; v++) {
            std::vector<std::pair<double, int64_t>> all;
            for (int64_t u = 0; u < 800; u++) {
                if (u == v) continue;
                double d = 0;
                for (int64_t j = 0; j < dim; j++) d += (x[u * dim + j] - x[v * dim + j]) * (x[u * dim + j] - x[v * dim + j]);
                all.push_back({d, u});
            }
            std::sort(all.begin(), all.end());
            std::vector<index_t> want;
            for (int i = 0; i < 7; i++) want.push_back(static_cast<index_t>(all[i].second));
            std::sort(want.begin(), want.end());
            const std::vector<index_t> got(c.col_idx.begin() + c.row_ptr[v], c.col_idx.begin() + c.row_ptr[v + 1]);
            ASSERT_EQ(got, want) << "row " << v << ", dim " << dim;
        }
    }
}

TEST(ZooKnn, SizedByEdgesAndShuffled) {
    const ZooShape shape = zoo_shape("knn", {{"edges", "20000"}, {"k", "10"}}, 1);
    EXPECT_EQ(shape.rows, 2000);
    EXPECT_EQ(shape.edges, 20000);
    const ZooGraph g = generate_zoo("knn", {{"edges", "20000"}, {"k", "10"}, {"dim", "1"}, {"order", "shuffled"}}, 1);
    EXPECT_EQ(csr_problem(g.csr), "");
    EXPECT_EQ(g.csr.nnz(), 20000);
    for (int64_t v = 0; v < g.csr.num_rows; v++) ASSERT_EQ(g.csr.row_length(v), 10);
}

TEST(ZooErdosRenyi, ExactEdgeCountUniformRows) {
    const ZooGraph g = deterministic("erdos-renyi", {{"nodes", "2000"}, {"edges", "40000"}});
    EXPECT_EQ(g.csr.num_rows, 2000);
    EXPECT_EQ(g.csr.nnz(), 40000);
    EXPECT_EQ(self_loops(g.csr), 0);
    EXPECT_EQ(duplicates(g.csr), 0);
    const GraphStats s = compute_stats(g.csr);
    EXPECT_NEAR(s.row_length_cov, 1 / std::sqrt(20.0), 0.05);  // binomial rows around 20
    EXPECT_NEAR(s.col_length_cov, 1 / std::sqrt(20.0), 0.05);
    EXPECT_LT(s.max_row_length, 3 * 20);
}

TEST(ZooErdosRenyi, DenseRowsStayExact) {
    // Half of all possible edges: rows near n - 1 exercise the acceptance step and Floyd's sampling.
    ErdosRenyiSpec s;
    s.nodes = 60;
    s.edges = 60 * 59 / 2;
    const CSR g = generate_erdos_renyi(s, 4);
    EXPECT_EQ(csr_problem(g), "");
    EXPECT_EQ(g.nnz(), s.edges);
    EXPECT_EQ(self_loops(g), 0);
    EXPECT_EQ(duplicates(g), 0);
}

TEST(ZooBatch, BlockDiagonalMoleculeLikeGraphs) {
    const ZooGraph g = deterministic("batch", {{"graphs", "300"}});
    const CSR &c = g.csr;
    ASSERT_EQ(g.graph_start.size(), 301u);
    EXPECT_EQ(g.graph_start.back(), c.num_rows);
    EXPECT_TRUE(symmetric(c));
    EXPECT_EQ(self_loops(c), 0);
    EXPECT_EQ(duplicates(c), 0);
    EXPECT_NEAR(static_cast<double>(c.nnz()) / static_cast<double>(c.num_rows), 2.2, 0.05);
    for (size_t k = 0; k + 1 < g.graph_start.size(); k++) {
        const int64_t b = g.graph_start[k], e = g.graph_start[k + 1];
        ASSERT_GE(e - b, 10);
        ASSERT_LE(e - b, 50);
        // No edge leaves the block, and the block is connected (a tree plus rings).
        std::vector<char> seen(static_cast<size_t>(e - b), 0);
        std::queue<int64_t> q;
        q.push(b);
        seen[0] = 1;
        int64_t reached = 1;
        while (!q.empty()) {
            const int64_t v = q.front();
            q.pop();
            for (int64_t p = c.row_ptr[v]; p < c.row_ptr[v + 1]; p++) {
                const int64_t u = c.col_idx[p];
                ASSERT_TRUE(u >= b && u < e) << "edge " << u << " -> " << v << " crosses graphs";
                if (!seen[u - b]) seen[u - b] = 1, reached++, q.push(u);
            }
        }
        ASSERT_EQ(reached, e - b) << "graph " << k << " is not connected";
    }
    EXPECT_LE(max_row(c), 4) << "at most 4 bonds at this density";
}

TEST(ZooBatch, SizedByNodesOrEdges) {
    const ZooShape by_nodes = zoo_shape("batch", {{"nodes", "100000"}}, 3);
    EXPECT_GE(by_nodes.rows, 100000);
    EXPECT_LT(by_nodes.rows, 100000 + 50);
    const ZooGraph g = generate_zoo("batch", {{"nodes", "100000"}}, 3);
    EXPECT_EQ(g.csr.num_rows, by_nodes.rows);
    EXPECT_EQ(g.csr.nnz(), by_nodes.edges);
    const ZooShape by_edges = zoo_shape("batch", {{"edges", "100000"}, {"degree", "2.5"}, {"min-nodes", "20"}}, 3);
    EXPECT_GE(by_edges.edges, 100000);
    EXPECT_LT(by_edges.edges, 100000 + 2 * 63);
}

TEST(ZooTwins, IntraIsTheCommunityStrength) {
    // The zoo's twin members are the twin generator with its options.
    const ZooGraph z = generate_zoo("ogbn-products", {{"scale", "0.002"}, {"intra", "0"}}, 4);
    TwinOptions o;
    o.scale = 0.002;
    o.intra = 0.0;
    o.seed = 4;
    EXPECT_TRUE(same_graph(z.csr, generate_twin(twin_spec("ogbn-products"), o)));
    const ZooShape shape = zoo_shape("ogbn-products", {{"scale", "0.002"}, {"intra", "0"}}, 4);
    EXPECT_EQ(shape.rows, z.csr.num_rows);
    EXPECT_EQ(shape.edges, z.csr.nnz());
}

TEST(ZooFamilies, ShapeMatchesTheGeneratedGraph) {
    const std::vector<std::pair<std::string, ZooParams>> cases = {
        {"chung-lu", {{"nodes", "3000"}, {"edges", "30000"}}},
        {"bipartite", {{"dst-nodes", "1000"}, {"src-nodes", "5000"}, {"edges", "20000"}}},
        {"rmat", {{"nodes", "3000"}, {"edges", "20000"}}},
        {"lattice", {{"nodes", "3000"}, {"degree", "3"}, {"width", "40"}}},
        {"knn", {{"nodes", "3000"}, {"k", "5"}}},
        {"erdos-renyi", {{"nodes", "3000"}, {"edges", "20000"}}},
        {"batch", {{"edges", "20000"}}},
    };
    for (const auto &[family, params] : cases) {
        const ZooShape s = zoo_shape(family, params, 11);
        const ZooGraph g = generate_zoo(family, params, 11);
        EXPECT_EQ(csr_problem(g.csr), "") << family;
        EXPECT_EQ(s.rows, g.csr.num_rows) << family;
        EXPECT_EQ(s.cols, g.csr.num_cols) << family;
        EXPECT_EQ(s.edges, g.csr.nnz()) << family;
    }
}

}  // namespace
}  // namespace gsparse::datasets::zoo
