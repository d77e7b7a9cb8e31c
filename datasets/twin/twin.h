// Dataset twins: deterministic synthetic graphs with the node count, edge count and row-length
// spread (mean and COV of the in-degrees) of published GNN datasets, for benchmarking sparse
// operators at realistic sizes without downloading the datasets.
//
// Model (see datasets/README.md for the full description):
//  1. Row lengths: a stratified lognormal sample calibrated to the target mean and COV, capped at
//     the number of source nodes, summing to exactly the target edge count.
//  2. Communities of varied sizes (a degree-corrected block model): each entry of row v picks its
//     source inside v's community with probability `intra`, otherwise from the whole graph, with
//     probability proportional to the source's weight (its row length + 1), through alias tables.
//  3. No duplicate sources within a row (bounded resampling, then a deterministic fill with unused
//     ids); rows are sorted ascending. Self-loops occur only when drawn.
//  4. Node ids are shuffled (a random permutation of rows and columns) or grouped by community.
//     Both orders of one seed give the same graph up to relabeling.
// The result depends only on (spec, scale, seed, communities, intra, order), never on the thread
// count.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/formats.h"

namespace gsparse::datasets {

/// The published shape of a dataset and the model defaults of its twin.
struct TwinSpec {
    std::string name;
    int64_t nodes = 0;         ///< node count (rows == columns)
    int64_t edges = 0;         ///< directed edge count (stored entries)
    double avg = 0;            ///< average row length (edges / nodes), informational
    double cov = 0;            ///< target COV (stddev / mean) of the row lengths
    int64_t communities = 1;   ///< default community count
    double intra = 0;          ///< default probability that an entry's source is in the row's community
};

/// Node id order of a generated graph.
enum class NodeOrder {
    shuffled,   ///< ids are a random permutation: communities are scattered over the id range
    community,  ///< ids are contiguous per community (community 0 first)
};

/// How far the generation of a twin's rows is: rows and edges written so far, of the totals.
struct TwinProgress {
    int64_t rows_done = 0, rows = 0;
    int64_t edges_done = 0, edges = 0;
};

struct TwinOptions {
    double scale = 1.0;                  ///< 0 < scale <= 1: nodes and edges are multiplied by it
    uint64_t seed = 1;
    std::optional<int64_t> communities;  ///< default: the spec's, capped at the scaled node count
    std::optional<double> intra;         ///< default: the spec's
    NodeOrder order = NodeOrder::shuffled;
    int threads = 0;                     ///< worker threads; 0: std::thread::hardware_concurrency()
    /// Called after every chunk of rows is generated, one call at a time (from the worker threads),
    /// and not at all when empty. It does not change the graph.
    std::function<void(const TwinProgress &)> progress;
};

/// Names of the built-in twins: "reddit", "ogbn-proteins", "ogbn-products".
std::vector<std::string> twin_names();

/// The spec of a built-in twin. Throws gsparse::Error naming the valid names for an unknown name.
TwinSpec twin_spec(const std::string &name);

/// Parses "shuffled" or "community"; throws gsparse::Error otherwise.
NodeOrder parse_node_order(const std::string &text);
const char *node_order_name(NodeOrder order);

/// The spec that generate_twin(spec, options) realizes: nodes = max(1, round(spec.nodes * scale)),
/// edges = min(round(spec.edges * scale), nodes * max(1, floor(nodes / 4))) (the average row
/// length is capped at a quarter of the node count so that rows of a heavy-tailed length
/// distribution still fit), avg = edges / nodes, communities and intra from the options or the
/// defaults. Throws gsparse::Error for invalid options or specs (the message names the problem).
TwinSpec resolve_twin(const TwinSpec &spec, const TwinOptions &options);

/// A generated twin with its community structure.
struct TwinGraph {
    CSR csr;                            ///< CSR by destination, sorted duplicate-free rows, identity edge ids
    TwinSpec spec;                      ///< the resolved spec (see resolve_twin)
    std::vector<index_t> community;     ///< community of every node (by id of csr)
    std::vector<index_t> relabel;       ///< community-order id -> id of csr (identity for NodeOrder::community)
    std::vector<int64_t> community_start;  ///< community c holds community-order ids [start[c], start[c+1])
    double sigma = 0;                   ///< calibrated lognormal sigma of the row lengths
};

TwinGraph generate_twin_graph(const TwinSpec &spec, const TwinOptions &options = {});

/// The graph of generate_twin_graph.
CSR generate_twin(const TwinSpec &spec, const TwinOptions &options = {});

}  // namespace gsparse::datasets
