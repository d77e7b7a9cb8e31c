// Graph file loaders and writers. Every loader validates what it read and throws FormatError for a
// malformed or truncated file (naming the file and line or byte offset) and GraphError for arrays
// that are inconsistent (out-of-range index, ...). Loaders never crash, hang or return a silently
// wrong graph.
//
//  Matrix Market (.mtx): "%%MatrixMarket matrix coordinate {pattern|real|integer} {general|symmetric}",
//    1-based "r c [value]" lines; entry (r, c) is the edge c -> r (row = destination). Symmetric files
//    store one triangle; every off-diagonal entry is expanded to both directions. Edge ids follow the
//    order of the file (for symmetric files, entry i gives edge ids 2i' and 2i'+1 in reading order).
//  Edge list (.el, .txt, .edges): whitespace-separated "src dst [weight]" lines, 0-based, '#' and '%'
//    comments; the node count is max id + 1 unless given.
//  Binary CSR (.gcsr): the layout documented in docs/graph-formats.md; loaded with a few reads and
//    no parsing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/formats.h"

namespace gsparse {

/// A graph as read from a file: CSR by destination plus optional per-edge values (indexed by edge id).
struct LoadedGraph {
    CSR csr;
    std::vector<float> values;  ///< empty for pattern files
};

LoadedGraph load_matrix_market(const std::string &path);
LoadedGraph load_edge_list(const std::string &path, std::optional<int64_t> num_nodes = std::nullopt);
LoadedGraph load_binary_csr(const std::string &path);
/// Picks the loader by extension (.mtx, .gcsr, otherwise edge list).
LoadedGraph load_graph(const std::string &path);

void save_matrix_market(const std::string &path, const CSR &csr, const std::vector<float> &values = {});
void save_edge_list(const std::string &path, const CSR &csr, const std::vector<float> &values = {});
void save_binary_csr(const std::string &path, const CSR &csr, const std::vector<float> &values = {});
/// Picks the writer by extension.
void save_graph(const std::string &path, const CSR &csr, const std::vector<float> &values = {});

}  // namespace gsparse
