// Properties every graph a loader accepts must have, checked by the graph-reader fuzz targets: the
// CSR is valid; the derived layouts (CSC, reverse, edge-order COO, source tiles and segments,
// balanced and locality orders, the relabeled graph, statistics) are consistent with it; and the
// graph survives a round trip through every writer unchanged (edge ids and values included).
#pragma once

#include <cmath>
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "graph/convert.h"
#include "graph/graph.h"
#include "graph/io.h"
#include "graph/validate.h"

namespace gsparse::fuzz {

inline bool same_value(float a, float b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
}

/// The graph in edge-id order: (destination, source, value) of every edge id.
inline void check_same_graph(const Graph &a, const Graph &b, const char *writer) {
    FUZZ_CHECK(a.num_dst() == b.num_dst() && a.num_src() == b.num_src() && a.num_edges() == b.num_edges(),
               "%s round trip changed the sizes", writer);
    const COO &ca = a.coo(), &cb = b.coo();
    FUZZ_CHECK(ca.row == cb.row && ca.col == cb.col, "%s round trip changed the edges", writer);
    FUZZ_CHECK(a.values().size() == b.values().size(), "%s round trip changed the value count", writer);
    for (size_t e = 0; e < a.values().size(); e++)
        FUZZ_CHECK(same_value(a.values()[e], b.values()[e]), "%s round trip changed value %zu", writer, e);
}

inline void check_derived_layouts(const Graph &g) {
    const CSR &csr = g.csr();
    validate(csr, "loaded CSR");
    const CSC &csc = g.csc();
    validate(csc, "derived CSC");
    FUZZ_CHECK(csc.nnz() == csr.nnz(), "CSC lost edges");
    const Graph &rev = g.reverse();
    FUZZ_CHECK(rev.num_dst() == g.num_src() && rev.num_edges() == g.num_edges(), "reverse has the wrong shape");
    const COO &coo = g.coo();
    validate(coo, "edge-order COO");
    // Twice reversed: the same edges with the same ids (rows may come back in another order).
    const COO &back = rev.reverse().coo();
    FUZZ_CHECK(back.row == coo.row && back.col == coo.col, "reverse of reverse is another graph");
    const COO &by_dst = g.coo_by_dst();
    FUZZ_CHECK(by_dst.nnz() == csr.nnz(), "coo_by_dst lost edges");
    const COO &tiled = g.coo_by_dst(4);
    FUZZ_CHECK(tiled.nnz() == csr.nnz(), "source tiles lost edges");
    g.source_tile_segments(4, 3);
    const std::vector<index_t> &bal = g.balanced_idx();
    validate_permutation(bal, g.num_dst(), "balanced_idx");
    const GraphStats &st = g.stats();
    FUZZ_CHECK(st.nnz == csr.nnz() && st.num_rows == csr.num_rows, "statistics disagree with the CSR");
    if (g.num_dst() == g.num_src()) {
        validate_permutation(g.locality_idx(), g.num_dst(), "locality_idx");
        const Graph &rel = g.relabeled();
        validate(rel.csr(), "relabeled CSR");
        FUZZ_CHECK(rel.num_edges() == g.num_edges(), "relabeling lost edges");
    }
}

/// Writes g with every writer and reads it back.
inline void check_round_trips(const Graph &g) {
    static MemFile out("gsparse-fuzz-out");
    const struct {
        const char *name;
        void (*save)(const std::string &, const CSR &, const std::vector<float> &);
        LoadedGraph (*load)(const std::string &);
    } formats[] = {
        {"Matrix Market", save_matrix_market, load_matrix_market},
        {"edge list", save_edge_list, [](const std::string &p) { return load_edge_list(p); }},
        {".gcsr", save_binary_csr, load_binary_csr},
    };
    for (const auto &f : formats) {
        f.save(out.path(), g.csr(), g.values());
        LoadedGraph back = f.load(out.path());
        check_same_graph(g, Graph::from_csr(std::move(back.csr), std::move(back.values)), f.name);
    }
}

/// Everything above for a graph a loader returned; a GraphError from Graph::from_csr is a finding
/// too, since loaders validate what they return.
inline void check_loaded(LoadedGraph lg) {
    Graph g = Graph::from_csr(std::move(lg.csr), std::move(lg.values));
    check_derived_layouts(g);
    check_round_trips(g);
}

/// Runs load on the input; loader errors (gsparse::Error) are the expected outcome for bad input,
/// and must not come from the checks of an accepted graph.
template <typename Load>
int run_graph_reader(const uint8_t *data, size_t size, Load load) {
    if (!numbers_at_most(data, size, kMaxNodes)) return -1;  // -1: not added to the corpus
    static MemFile in("gsparse-fuzz-in");
    in.write(data, size);
    LoadedGraph lg;
    try {
        lg = load(in.path());
    } catch (const Error &) {
        return 0;
    }
    try {
        check_loaded(std::move(lg));
    } catch (const Error &e) {
        FUZZ_CHECK(false, "an accepted graph failed a later step: %s", e.what());
    }
    return 0;
}

}  // namespace gsparse::fuzz
