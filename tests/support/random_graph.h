// Random graphs for tests. Each graph is fresh (seeded from the test's seed) and contains the cases
// that break sparse kernels: empty rows, one very long row, duplicate edges and self-loops, with
// rows in random (unsorted) order and edge ids that are not the CSR positions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace gsparse::test {

struct RandomGraphOptions {
    int64_t num_nodes = 300;
    int64_t num_src = -1;          ///< source count for bipartite graphs; -1 means num_nodes
    double avg_degree = 6.0;
    double empty_row_share = 0.2;  ///< share of rows forced empty
    int64_t long_row = -1;         ///< length of the one very long row; -1 means 8 * num_src
    double duplicate_share = 0.1;  ///< share of edges that repeat an earlier edge of their row
    double self_loop_share = 0.05;
    bool shuffle_edge_ids = true;  ///< edge ids in random order (not CSR positions)
};

/// A random graph as an edge list in edge-id order: edge i is src[i] -> dst[i].
struct EdgeList {
    int64_t num_dst = 0;
    int64_t num_src = 0;
    std::vector<index_t> src, dst;
};

EdgeList random_edges(uint64_t seed, const RandomGraphOptions &opt = {});
Graph random_graph(uint64_t seed, const RandomGraphOptions &opt = {});

/// Path of a real graph in datasets/real, e.g. real_graph_path("cora").
std::string real_graph_path(const std::string &name);
/// Names of the real graphs available.
std::vector<std::string> real_graph_names();

}  // namespace gsparse::test
