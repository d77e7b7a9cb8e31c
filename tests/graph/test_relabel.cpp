// Relabeling a graph (graph/relabel.h, Graph::relabeled): node order[i] becomes node i, rows keep
// their edges with renamed, sorted sources and the ids of the original edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/relabel.h"
#include "graph/validate.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

/// The edges of a CSR as (destination, source, edge id) triples, sorted.
std::vector<std::tuple<index_t, index_t, index_t>> edges_of(const CSR &c) {
    std::vector<std::tuple<index_t, index_t, index_t>> e;
    for (int64_t v = 0; v < c.num_rows; v++)
        for (int64_t k = c.row_ptr[static_cast<size_t>(v)]; k < c.row_ptr[static_cast<size_t>(v) + 1]; k++)
            e.emplace_back(static_cast<index_t>(v), c.col_idx[static_cast<size_t>(k)], c.edge_id(k));
    std::sort(e.begin(), e.end());
    return e;
}

TEST(Relabel, RenumbersRowsAndSourcesAndKeepsEdgeIds) {
    for (bool shuffled : {true, false}) {
        RandomGraphOptions opt;
        opt.num_nodes = 500;
        opt.shuffle_edge_ids = shuffled;
        Graph g = random_graph(shuffled ? 71 : 72, opt);  // empty rows, a long row, duplicates, self-loops
        const CSR &c = g.csr();
        std::vector<index_t> order(static_cast<size_t>(c.num_rows));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
        const CSR r = relabel_csr(c, order);
        validate(r, "relabeled");
        validate_sorted_rows(r, "relabeled");
        ASSERT_EQ(r.nnz(), c.nnz());
        ASSERT_FALSE(r.identity_edge_ids());
        std::vector<index_t> new_id(order.size());
        for (size_t i = 0; i < order.size(); i++) new_id[static_cast<size_t>(order[i])] = static_cast<index_t>(i);
        // Row i is row order[i]; every edge keeps its id, with both ends renamed.
        for (int64_t i = 0; i < r.num_rows; i++) EXPECT_EQ(r.row_length(i), c.row_length(order[static_cast<size_t>(i)]));
        auto expected = edges_of(c);
        for (auto &[d, s, e] : expected) d = new_id[static_cast<size_t>(d)], s = new_id[static_cast<size_t>(s)];
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(edges_of(r), expected);
        // Duplicate sources keep their order of edge ids within the row (stable).
        for (int64_t i = 0; i < r.num_rows; i++)
            for (int64_t k = r.row_ptr[static_cast<size_t>(i)] + 1; k < r.row_ptr[static_cast<size_t>(i) + 1]; k++)
                if (r.col_idx[static_cast<size_t>(k)] == r.col_idx[static_cast<size_t>(k) - 1]) {
                    // The original row lists these duplicates in the same relative order.
                    const int64_t old = order[static_cast<size_t>(i)];
                    std::vector<index_t> ids;
                    for (int64_t q = c.row_ptr[static_cast<size_t>(old)]; q < c.row_ptr[static_cast<size_t>(old) + 1]; q++)
                        if (new_id[static_cast<size_t>(c.col_idx[static_cast<size_t>(q)])] == r.col_idx[static_cast<size_t>(k)])
                            ids.push_back(c.edge_id(q));
                    auto a = std::find(ids.begin(), ids.end(), r.edge_ids[static_cast<size_t>(k) - 1]);
                    auto b = std::find(ids.begin(), ids.end(), r.edge_ids[static_cast<size_t>(k)]);
                    EXPECT_LT(a, b);
                }
    }
}

TEST(Relabel, IdentityOrderKeepsTheStructure) {
    Graph g = random_graph(73);
    const CSR &c = g.csr();
    std::vector<index_t> order(static_cast<size_t>(c.num_rows));
    std::iota(order.begin(), order.end(), 0);
    const CSR r = relabel_csr(c, order);
    EXPECT_EQ(r.row_ptr, c.row_ptr);
    EXPECT_EQ(edges_of(r), edges_of(c));
}

TEST(Relabel, RejectsNonSquareGraphsAndBadOrders) {
    RandomGraphOptions opt;
    opt.num_nodes = 50;
    opt.num_src = 80;
    Graph bip = random_graph(74, opt);
    std::vector<index_t> order(50);
    std::iota(order.begin(), order.end(), 0);
    try {
        relabel_csr(bip.csr(), order);
        FAIL() << "a bipartite graph was relabeled";
    } catch (const GraphError &e) {
        EXPECT_NE(std::string(e.what()).find("square"), std::string::npos) << e.what();
    }
    EXPECT_THROW(bip.relabeled(), GraphError);
    Graph g = random_graph(75, RandomGraphOptions{50});
    std::vector<index_t> dup = order;
    dup[3] = dup[4];
    EXPECT_THROW(relabel_csr(g.csr(), dup), GraphError);
    std::vector<index_t> short_order(order.begin(), order.end() - 1);
    EXPECT_THROW(relabel_csr(g.csr(), short_order), GraphError);
}

TEST(Relabel, GraphRelabeledFollowsTheLocalityOrderOnce) {
    Graph g = random_graph(76, RandomGraphOptions{800});
    const Graph &r = g.relabeled();
    EXPECT_EQ(&r, &g.relabeled());  // computed once
    const std::vector<index_t> &order = g.locality_idx();
    ASSERT_EQ(r.num_dst(), g.num_dst());
    for (int64_t i = 0; i < r.num_dst(); i++)
        EXPECT_EQ(r.csr().row_length(i), g.csr().row_length(order[static_cast<size_t>(i)]));
    EXPECT_EQ(r.num_edges(), g.num_edges());
}

}  // namespace
}  // namespace gsparse::test
