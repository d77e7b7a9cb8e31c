// Sparse graph formats. A graph has num_rows destination nodes and num_cols source nodes (equal for
// ordinary graphs; different for bipartite blocks). Seen as a sparse matrix A, an edge u -> v with
// id e is the entry A[v][u], so g-SpMM with copy_lhs/sum computes Z = A X.
//
//  CSR (by destination): row v holds the sources u of v's in-edges in col_idx[row_ptr[v]..row_ptr[v+1]),
//       with the id of each edge in edge_ids. This is the layout g-SpMM reads.
//  CSC (by source):      column u holds the destinations v of u's out-edges; the transpose of CSR,
//                        used by the backward pass of g-SpMM.
//  COO:                  one (row = destination, col = source) pair per edge; g-SDDMM reads it.
//
// Every format carries edge ids so that conversions keep the identity of each edge: edge-feature
// tensors are always indexed by edge id. An empty edge_ids vector means the identity (the id of the
// edge stored at position i is i), which saves memory on generated and freshly built graphs.
// Indices are int32: graphs with more than INT32_MAX nodes or edges are rejected by validation.
#pragma once

#include <cstdint>
#include <vector>

namespace gsparse {

using index_t = int32_t;

struct CSR {
    int64_t num_rows = 0;
    int64_t num_cols = 0;
    std::vector<index_t> row_ptr;   ///< num_rows + 1 offsets, row_ptr[0] == 0, row_ptr.back() == nnz
    std::vector<index_t> col_idx;   ///< nnz source ids
    std::vector<index_t> edge_ids;  ///< nnz edge ids, or empty for the identity

    int64_t nnz() const { return static_cast<int64_t>(col_idx.size()); }
    bool identity_edge_ids() const { return edge_ids.empty(); }
    index_t edge_id(int64_t pos) const { return edge_ids.empty() ? static_cast<index_t>(pos) : edge_ids[pos]; }
    int64_t row_length(int64_t v) const { return row_ptr[v + 1] - row_ptr[v]; }
};

struct CSC {
    int64_t num_rows = 0;           ///< destinations
    int64_t num_cols = 0;           ///< sources
    std::vector<index_t> col_ptr;   ///< num_cols + 1 offsets
    std::vector<index_t> row_idx;   ///< nnz destination ids
    std::vector<index_t> edge_ids;  ///< nnz edge ids, or empty for the identity

    int64_t nnz() const { return static_cast<int64_t>(row_idx.size()); }
    bool identity_edge_ids() const { return edge_ids.empty(); }
    index_t edge_id(int64_t pos) const { return edge_ids.empty() ? static_cast<index_t>(pos) : edge_ids[pos]; }
};

struct COO {
    int64_t num_rows = 0;
    int64_t num_cols = 0;
    std::vector<index_t> row;       ///< destination of each stored edge
    std::vector<index_t> col;       ///< source of each stored edge
    std::vector<index_t> edge_ids;  ///< nnz edge ids, or empty for the identity

    int64_t nnz() const { return static_cast<int64_t>(row.size()); }
    bool identity_edge_ids() const { return edge_ids.empty(); }
    index_t edge_id(int64_t pos) const { return edge_ids.empty() ? static_cast<index_t>(pos) : edge_ids[pos]; }
};

/// Shape statistics of a graph's rows (in-degrees).
struct GraphStats {
    int64_t num_rows = 0;
    int64_t num_cols = 0;
    int64_t nnz = 0;
    double avg_row_length = 0;  ///< nnz / num_rows
    int64_t max_row_length = 0;
    int64_t empty_rows = 0;
    double row_length_cov = 0;  ///< standard deviation / mean of row lengths (0 when the mean is 0)
    // Columns (out-degrees: how often each source is gathered).
    int64_t max_col_length = 0;
    int64_t empty_cols = 0;     ///< sources no row reads
    double col_length_cov = 0;  ///< standard deviation / mean of column lengths (0 when the mean is 0)
};

}  // namespace gsparse
