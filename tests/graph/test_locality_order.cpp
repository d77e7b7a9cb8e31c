// The locality order of a CSR's rows (graph/locality_order.h, Graph::locality_idx): rows grouped by
// label-propagation clusters of their columns, longest first within a group, empty rows last.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "graph/convert.h"
#include "graph/graph.h"
#include "graph/locality_order.h"
#include "graph/validate.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

std::vector<index_t> order_of(const CSR &c, int threads = 0) {
    return gsparse_locality::locality_order<index_t>(c.num_rows, c.num_cols, c.row_ptr.data(), c.col_idx.data(), threads);
}
std::vector<index_t> labels_of(const CSR &c, int threads = 0) {
    return gsparse_locality::cluster_rows<index_t>(c.num_rows, c.num_cols, c.row_ptr.data(), c.col_idx.data(), threads);
}

/// A planted partition: `groups` communities of varied sizes, each row drawing `degree` sources, a
/// share `intra` of them from its own community, the rest from the whole graph, both weighted towards
/// a few hubs; node ids shuffled. community[v] is v's community.
struct Planted {
    CSR csr;
    std::vector<int> community;
};

Planted planted_partition(uint64_t seed, int groups, int degree, double intra) {
    std::mt19937_64 rng(seed);
    std::vector<int> sizes;
    for (int g = 0; g < groups; g++) sizes.push_back(60 + 40 * g);
    const int n = std::accumulate(sizes.begin(), sizes.end(), 0);
    std::vector<index_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int> start(1, 0);
    for (int s : sizes) start.push_back(start.back() + s);
    Planted p;
    p.community.resize(static_cast<size_t>(n));
    std::vector<index_t> src, dst;
    std::uniform_real_distribution<double> coin(0, 1);
    for (int g = 0; g < groups; g++)
        for (int i = start[g]; i < start[g + 1]; i++) {
            p.community[static_cast<size_t>(perm[i])] = g;
            for (int e = 0; e < degree; e++) {
                int u;
                if (coin(rng) < intra) {
                    // Skewed within the community: low offsets (the community's hubs) are likelier.
                    const double x = coin(rng);
                    u = start[g] + static_cast<int>(x * x * sizes[static_cast<size_t>(g)]);
                } else {
                    // Across communities too, the first nodes (community 0's hubs) are likelier.
                    const double x = coin(rng);
                    u = static_cast<int>(x * x * x * n);
                }
                dst.push_back(perm[i]);
                src.push_back(perm[static_cast<size_t>(std::min(u, n - 1))]);
            }
        }
    p.csr = Graph::from_edges(n, src, dst).csr();
    return p;
}

TEST(LocalityOrder, RecoversPlantedCommunitiesAndKeepsThemContiguous) {
    const Planted p = planted_partition(7, 6, 40, 0.9);
    const std::vector<index_t> label = labels_of(p.csr);
    // Every cluster is (almost) one community, and every community (almost) one cluster.
    std::map<index_t, std::map<int, int>> by_label;
    std::map<int, std::map<index_t, int>> by_community;
    for (size_t v = 0; v < label.size(); v++) {
        by_label[label[v]][p.community[v]]++;
        by_community[p.community[v]][label[v]]++;
    }
    auto majority_share = [](const auto &groups) {
        int64_t majority = 0, total = 0;
        for (const auto &[key, counts] : groups) {
            int best = 0;
            for (const auto &[k, c] : counts) best = std::max(best, c), total += c;
            majority += best;
        }
        return static_cast<double>(majority) / static_cast<double>(total);
    };
    EXPECT_GE(majority_share(by_label), 0.98) << by_label.size() << " clusters";
    EXPECT_GE(majority_share(by_community), 0.98) << by_label.size() << " clusters";
    // In the order, each community occupies (almost) one contiguous run of positions.
    const std::vector<index_t> order = order_of(p.csr);
    validate_permutation(order, p.csr.num_rows, "locality order");
    int runs = 1;
    for (size_t i = 1; i < order.size(); i++)
        runs += p.community[static_cast<size_t>(order[i])] != p.community[static_cast<size_t>(order[i - 1])];
    EXPECT_LE(runs, 6 + 2 * static_cast<int>(order.size() / 100)) << "communities are scattered over the order";
}

TEST(LocalityOrder, HubsDoNotMergeCommunities) {
    // Many small communities that all read a few global hubs (a share of every row goes to the
    // graph's first nodes): without the modularity term, the hubs' labels would absorb them.
    const Planted p = planted_partition(11, 10, 30, 0.7);
    std::map<index_t, int> sizes;
    for (index_t l : labels_of(p.csr)) sizes[l]++;
    int largest = 0;
    for (const auto &[l, s] : sizes) largest = std::max(largest, s);
    const int biggest_community = 60 + 40 * 9;
    EXPECT_LE(largest, biggest_community + biggest_community / 10) << sizes.size() << " clusters";
}

TEST(LocalityOrder, IsAPermutationWithRowsLongestFirstWithinAClusterAndEmptyRowsLast) {
    for (uint64_t seed : {3, 4, 5}) {
        Graph g = random_graph(seed);  // empty rows, a very long row, duplicates, self-loops
        const CSR &c = g.csr();
        const std::vector<index_t> order = order_of(c), label = labels_of(c);
        validate_permutation(order, c.num_rows, "locality order");
        bool seen_empty = false;
        for (size_t i = 0; i < order.size(); i++) {
            const index_t v = order[i];
            const bool empty = c.row_length(v) == 0;
            EXPECT_EQ(label[static_cast<size_t>(v)] < 0, empty) << "row " << v;
            if (seen_empty) {
                EXPECT_TRUE(empty) << "a non-empty row after an empty one at position " << i;
            }
            seen_empty = seen_empty || empty;
            if (i > 0 && !empty && label[static_cast<size_t>(order[i - 1])] == label[static_cast<size_t>(v)]) {
                EXPECT_GE(c.row_length(order[i - 1]), c.row_length(v)) << "position " << i;
            }
        }
        // A cluster's rows are contiguous.
        std::set<index_t> finished;
        for (size_t i = 0; i < order.size(); i++) {
            const index_t l = label[static_cast<size_t>(order[i])];
            if (i > 0 && label[static_cast<size_t>(order[i - 1])] != l) {
                EXPECT_TRUE(finished.insert(label[static_cast<size_t>(order[i - 1])]).second);
                EXPECT_EQ(finished.count(l), 0u) << "cluster " << l << " resumes at position " << i;
            }
        }
    }
}

TEST(LocalityOrder, SameResultForAnyThreadCount) {
    // Over 1024 rows (the chunk the workers take), so that several threads share the rows.
    const Planted p = planted_partition(13, 20, 10, 0.8);
    ASSERT_GT(p.csr.num_rows, 4 * 1024);
    const std::vector<index_t> one = order_of(p.csr, 1);
    EXPECT_EQ(order_of(p.csr, 2), one);
    EXPECT_EQ(order_of(p.csr, 7), one);
    Graph g = random_graph(21);
    EXPECT_EQ(order_of(g.csr(), 1), order_of(g.csr(), 5));
}

TEST(LocalityOrder, BipartiteGraphsKeepHubLabels) {
    RandomGraphOptions opt;
    opt.num_nodes = 200;
    opt.num_src = 75;
    Graph g = random_graph(31, opt);
    const CSR &c = g.csr();
    const std::vector<index_t> label = labels_of(c);
    // Each non-empty row's label is the column it reads that the most rows read (ties: smaller id).
    std::vector<int64_t> uses(static_cast<size_t>(c.num_cols), 0);
    for (index_t u : c.col_idx) uses[static_cast<size_t>(u)]++;
    for (int64_t v = 0; v < c.num_rows; v++) {
        index_t hub = -1;
        for (index_t p = c.row_ptr[v]; p < c.row_ptr[v + 1]; p++) {
            const index_t u = c.col_idx[p];
            if (hub < 0 || uses[u] > uses[hub] || (uses[u] == uses[hub] && u < hub)) hub = u;
        }
        EXPECT_EQ(label[static_cast<size_t>(v)], hub) << "row " << v;
    }
    validate_permutation(order_of(c), c.num_rows, "locality order");
}

TEST(LocalityOrder, EmptyGraphsAndGraphsWithoutEdges) {
    EXPECT_TRUE(order_of(Graph().csr()).empty());
    Graph none = Graph::from_edges(5, {}, {});
    EXPECT_EQ(order_of(none.csr()), (std::vector<index_t>{0, 1, 2, 3, 4}));
}

TEST(LocalityOrder, GraphComputesItOnceAndMatchesTheFunction) {
    Graph g = random_graph(41);
    const std::vector<index_t> &a = g.locality_idx();
    EXPECT_EQ(&a, &g.locality_idx());
    EXPECT_EQ(a, order_of(g.csr()));
}

}  // namespace
}  // namespace gsparse::test
