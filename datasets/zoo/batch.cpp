// Block-diagonal batches of small graphs, shaped like molecule datasets (10-50 atoms, average
// degree ~2.2, atoms of at most 4 bonds): the graphs of one mini-batch of a graph-level task.
//
// Graph g has n_g nodes, uniform in [min_nodes, max_nodes] (its own random stream, so the sizes
// of the first graphs do not depend on the graph count), and m_g = round(degree * n_g / 2)
// undirected edges, at least n_g - 1 (a tree) and at most n_g (n_g - 1) / 2. It is built as
//  1. a random tree: node i > 0 bonds to a random earlier node, preferring ones with fewer than 4
//     bonds (up to 32 tries);
//  2. ring-closing edges between random non-adjacent pairs, preferring pairs with fewer than 4
//     bonds each (32 tries), then any non-adjacent pair (32 tries), then the first non-adjacent
//     pair after a random start.
// Both directions are stored; graph g holds ids [graph_start[g], graph_start[g + 1]) and its
// edges stay inside that block. No self-loops, no duplicates.
#include <cmath>

#include "zoo/common.h"
#include "zoo/families.h"

namespace gsparse::datasets::zoo {

namespace {

constexpr int64_t kMaxGraphNodes = 4096;
constexpr int kValence = 4;

}  // namespace

void validate(const BatchSpec &s) {
    if (s.min_nodes < 2 || s.min_nodes > kMaxGraphNodes)
        fail<Error>("batch: min-nodes = ", s.min_nodes, " is out of range: it must be in [2, ", kMaxGraphNodes, "]");
    if (s.max_nodes < s.min_nodes || s.max_nodes > kMaxGraphNodes)
        fail<Error>("batch: max-nodes = ", s.max_nodes, " is out of range: it must be in [min-nodes = ", s.min_nodes,
                    ", ", kMaxGraphNodes, "]");
    if (!(s.degree > 0 && s.degree <= static_cast<double>(s.min_nodes - 1)))
        fail<Error>("batch: degree = ", s.degree, " is out of range: it must be in (0, min-nodes - 1 = ",
                    s.min_nodes - 1, "]");
    if (s.graphs < 0) fail<Error>("batch: graphs = ", s.graphs, " must be >= 0");
}

namespace {

int64_t graph_size(const BatchSpec &s, uint64_t seed, int64_t g) {
    Rng rng = stream(seed, Family::batch, 1, static_cast<uint64_t>(g));
    return s.min_nodes + static_cast<int64_t>(rng.below(static_cast<uint64_t>(s.max_nodes - s.min_nodes + 1)));
}

/// One small graph: its adjacency (a bitset of n x n) and bond counts.
struct Molecule {
    int64_t n = 0;
    std::vector<uint64_t> adj;
    std::vector<int> bonds;
    bool has(int64_t u, int64_t v) const { return (adj[static_cast<size_t>((u * n + v) >> 6)] >> ((u * n + v) & 63)) & 1; }
    void set(int64_t u, int64_t v) { adj[static_cast<size_t>((u * n + v) >> 6)] |= uint64_t{1} << ((u * n + v) & 63); }
    void bond(int64_t u, int64_t v) {
        set(u, v), set(v, u);
        bonds[u]++, bonds[v]++;
    }
    void reset(int64_t size) {
        n = size;
        adj.assign(static_cast<size_t>((n * n + 63) / 64), 0);
        bonds.assign(static_cast<size_t>(n), 0);
    }
};

void build(Molecule &m, int64_t n, int64_t edges, Rng &rng) {
    m.reset(n);
    auto below = [&](int64_t k) { return static_cast<int64_t>(rng.below(static_cast<uint64_t>(k))); };
    for (int64_t i = 1; i < n; i++) {
        int64_t j = below(i);
        for (int t = 0; t < 32 && m.bonds[j] >= kValence; t++) j = below(i);
        m.bond(i, j);
    }
    for (int64_t e = n - 1; e < edges; e++) {
        bool done = false;
        for (int t = 0; t < 64 && !done; t++) {
            const int64_t u = below(n), v = below(n);
            if (u == v || m.has(u, v) || (t < 32 && (m.bonds[u] >= kValence || m.bonds[v] >= kValence))) continue;
            m.bond(u, v);
            done = true;
        }
        for (int64_t p = below(n * n), k = 0; !done && k < n * n; k++, p = p + 1 == n * n ? 0 : p + 1) {
            const int64_t u = p / n, v = p % n;
            if (u != v && !m.has(u, v)) m.bond(u, v), done = true;
        }
    }
}

}  // namespace

int64_t batch_graph_edges(const BatchSpec &s, int64_t n) {
    const int64_t m = std::llround(s.degree * static_cast<double>(n) / 2);
    return std::clamp<int64_t>(m, n - 1, n * (n - 1) / 2);
}

std::vector<int64_t> batch_graph_sizes(const BatchSpec &s, uint64_t seed) {
    validate(s);
    std::vector<int64_t> sizes(static_cast<size_t>(s.graphs));
    for (int64_t g = 0; g < s.graphs; g++) sizes[g] = graph_size(s, seed, g);
    return sizes;
}

int64_t batch_graphs_for_nodes(const BatchSpec &s, int64_t nodes, uint64_t seed) {
    validate(s);
    if (nodes < 1 || nodes > kIndexMax)
        fail<Error>("batch: nodes = ", nodes, " is out of range: it must be in [1, ", kIndexMax, "]");
    int64_t g = 0;
    for (int64_t total = 0; total < nodes; g++) total += graph_size(s, seed, g);
    return g;
}

int64_t batch_graphs_for_edges(const BatchSpec &s, int64_t edges, uint64_t seed) {
    validate(s);
    if (edges < 1 || edges > kIndexMax)
        fail<Error>("batch: edges = ", edges, " is out of range: it must be in [1, ", kIndexMax, "]");
    int64_t g = 0;
    for (int64_t total = 0; total < edges; g++) total += 2 * batch_graph_edges(s, graph_size(s, seed, g));
    return g;
}

BatchGraph generate_batch(const BatchSpec &s, uint64_t seed, int threads) {
    validate(s);
    const std::vector<int64_t> sizes = batch_graph_sizes(s, seed);
    BatchGraph out;
    out.graph_start.assign(static_cast<size_t>(s.graphs) + 1, 0);
    std::vector<int64_t> edge_start(static_cast<size_t>(s.graphs) + 1, 0);
    for (int64_t g = 0; g < s.graphs; g++) {
        out.graph_start[g + 1] = out.graph_start[g] + sizes[g];
        edge_start[g + 1] = edge_start[g] + 2 * batch_graph_edges(s, sizes[g]);
    }
    const int64_t nodes = out.graph_start.back(), edges = edge_start.back();
    if (nodes > kIndexMax || edges > kIndexMax)
        fail<Error>("batch: graphs = ", s.graphs, " give ", nodes, " nodes and ", edges, " edges; both must be <= ",
                    kIndexMax, " (int32 indices)");
    CSR &csr = out.csr;
    csr.num_rows = csr.num_cols = nodes;
    csr.row_ptr.assign(static_cast<size_t>(nodes) + 1, 0);
    csr.col_idx.resize(static_cast<size_t>(edges));
    std::vector<Molecule> workers(static_cast<size_t>(worker_count(threads, (s.graphs + 63) / 64)));
    parallel_for(s.graphs, 64, workers, [&](Molecule &m, int64_t g) {
        Rng rng = stream(seed, Family::batch, 2, static_cast<uint64_t>(g));
        const int64_t n = sizes[g], base = out.graph_start[g];
        build(m, n, batch_graph_edges(s, n), rng);
        int64_t at = edge_start[g];
        for (int64_t u = 0; u < n; u++) {
            // Row u's bits [u n, u n + n) of the adjacency, a word at a time.
            for (int64_t p = u * n, end = p + n; p < end;) {
                const int64_t span = std::min<int64_t>(64 - (p & 63), end - p);
                uint64_t w = m.adj[static_cast<size_t>(p >> 6)] >> (p & 63);
                if (span < 64) w &= (uint64_t{1} << span) - 1;
                for (; w; w &= w - 1) csr.col_idx[at++] = static_cast<index_t>(base + p - u * n + __builtin_ctzll(w));
                p += span;
            }
            csr.row_ptr[base + u + 1] = static_cast<index_t>(at);
        }
    });
    return out;
}

}  // namespace gsparse::datasets::zoo
