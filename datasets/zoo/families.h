// The graph families of the zoo as typed C++ generators. Each returns a CSR by destination (row v
// lists the sources of v's in-edges) with sorted rows and identity edge ids, is deterministic under
// its seed (the same spec and seed give the same graph for any thread count) and rejects invalid
// specs with gsparse::Error naming the parameter as the command line spells it.
//
// Family          graph                                                  self-loops  duplicates
// chung-lu        power-law in- and out-degrees, exactly `edges` edges   none        none
// bipartite       rows (dst) != columns (src), power law or uniform      -           none
// rmat            R-MAT / Kronecker (Graph500 a, b, c, d)                simple: none; multigraph: kept
// lattice         2-D grid, a random subset of its 8-neighbour stencil   none        none (symmetric)
// knn             k nearest neighbours of random points in [0,1]^dim     none        none (k per row)
// erdos-renyi     G(n, m): m distinct directed edges, uniformly           none        none
// batch           block-diagonal batch of small molecule-like graphs     none        none (symmetric)
#pragma once

#include <cstdint>
#include <vector>

#include "graph/formats.h"

namespace gsparse::datasets::zoo {

/// Chung-Lu: node v has expected in-degree w_in(v) and out-degree w_out(v) from power laws with the
/// given exponents (P(k) ~ k^-exponent, exponent > 1), optionally limited to max_*_degree (0: only
/// by the node count). The in-degrees are a multinomial sample of `edges` draws by w_in (so low-
/// weight rows may be empty, as in the model); each row's sources are drawn by w_out, distinct and
/// never the row itself. In- and out-weights are dealt to the nodes by independent random
/// permutations.
struct ChungLuSpec {
    int64_t nodes = 1000000;
    int64_t edges = 16000000;
    double in_exponent = 2.2;
    double out_exponent = 2.2;
    double max_in_degree = 0;
    double max_out_degree = 0;
};
CSR generate_chung_lu(const ChungLuSpec &spec, uint64_t seed, int threads = 0);

/// A rectangular bipartite graph (user-item): dst_nodes rows aggregate from src_nodes sources. Row
/// lengths and source popularity follow power laws (exponent > 1) or are uniform (exponent 0), as
/// in chung-lu; sources are distinct within a row.
struct BipartiteSpec {
    int64_t dst_nodes = 200000;
    int64_t src_nodes = 1000000;
    int64_t edges = 10000000;
    double in_exponent = 2.5;
    double out_exponent = 3.0;
    double max_in_degree = 0;
    double max_out_degree = 0;
};
CSR generate_bipartite(const BipartiteSpec &spec, uint64_t seed, int threads = 0);

/// R-MAT: every edge descends the 2^L x 2^L adjacency matrix (L = ceil(log2 nodes), rows =
/// sources as in Graph500) picking quadrant a, b, c or d = 1 - a - b - c at every level; ids >=
/// nodes are redrawn. simple: self-loops and repeated edges are redrawn (the graph has exactly
/// `edges` distinct edges); otherwise they are kept as Graph500 generates them. shuffle: node ids
/// are randomly permuted (Graph500 does), else id 0 is the densest node.
struct RmatSpec {
    int64_t nodes = int64_t{1} << 20;
    int64_t edges = int64_t{16} << 20;
    double a = 0.57, b = 0.19, c = 0.19;
    bool simple = true;
    bool shuffle = true;
};
CSR generate_rmat(const RmatSpec &spec, uint64_t seed, int threads = 0);

/// A road-like lattice / mesh: nodes on a grid `width` wide (0: ceil(sqrt(nodes))), ids row-major.
/// Of the 8-neighbour stencil's undirected edges, exactly edges / 2 are kept: axis edges first
/// (each axis edge equally likely; average degree up to ~4), then diagonals (up to ~8). Both
/// directions are stored. shuffle: node ids randomly permuted.
struct LatticeSpec {
    int64_t nodes = 1000000;
    int64_t edges = 4000000;  ///< directed (twice the undirected count); even
    int64_t width = 0;
    bool shuffle = false;
};
CSR generate_lattice(const LatticeSpec &spec, uint64_t seed, int threads = 0);

/// k-nearest-neighbour graph: `nodes` uniform random points in [0,1]^dim; row v lists the k points
/// nearest to v (Euclidean, ties by id), found exactly with a grid of cells holding ~k points
/// each. Every row has exactly k entries. Ids follow the cells (spatially local) unless shuffled.
struct KnnSpec {
    int64_t nodes = 1000000;
    int64_t k = 16;
    int64_t dim = 3;
    bool shuffle = false;
};
CSR generate_knn(const KnnSpec &spec, uint64_t seed, int threads = 0);
/// The points of generate_knn(spec, seed) in the natural id order, spec.dim coordinates each.
std::vector<double> knn_points(const KnnSpec &spec, uint64_t seed);

/// Erdős–Rényi G(n, m): exactly `edges` distinct directed edges without self-loops, every such
/// graph equally likely. Requires edges <= nodes * (nodes - 1) / 2.
struct ErdosRenyiSpec {
    int64_t nodes = 1000000;
    int64_t edges = 16000000;
};
CSR generate_erdos_renyi(const ErdosRenyiSpec &spec, uint64_t seed, int threads = 0);

/// A block-diagonal batch of `graphs` small undirected graphs (molecule-like): each has a uniform
/// size in [min_nodes, max_nodes], is a random tree (atoms of at most 4 bonds where possible) plus
/// ring-closing edges up to round(degree * size / 2) edges in all, both directions stored. Graph g
/// holds ids [graph_start[g], graph_start[g + 1]); no edge crosses graphs.
struct BatchSpec {
    int64_t graphs = 15000;
    int64_t min_nodes = 10;
    int64_t max_nodes = 50;
    double degree = 2.2;
};
struct BatchGraph {
    CSR csr;
    std::vector<int64_t> graph_start;  ///< graphs + 1 offsets
};
BatchGraph generate_batch(const BatchSpec &spec, uint64_t seed, int threads = 0);
/// The sizes of the batch's graphs (cheap: no edges); the graph count that reaches at least
/// `nodes` nodes, or at least `edges` directed edges.
std::vector<int64_t> batch_graph_sizes(const BatchSpec &spec, uint64_t seed);
int64_t batch_graphs_for_nodes(const BatchSpec &spec, int64_t nodes, uint64_t seed);
int64_t batch_graphs_for_edges(const BatchSpec &spec, int64_t edges, uint64_t seed);
/// Undirected edges of one batch graph of n nodes.
int64_t batch_graph_edges(const BatchSpec &spec, int64_t n);

/// The checks each generator runs first (gsparse::Error naming the parameter), without generating.
void validate(const ChungLuSpec &spec);
void validate(const BipartiteSpec &spec);
void validate(const RmatSpec &spec);
void validate(const LatticeSpec &spec);
void validate(const KnnSpec &spec);
void validate(const ErdosRenyiSpec &spec);
void validate(const BatchSpec &spec);

}  // namespace gsparse::datasets::zoo
