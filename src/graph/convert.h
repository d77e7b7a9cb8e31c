// Conversions between sparse formats. All conversions keep edge ids: the edge stored at any
// position of the output has the same id (and the same endpoints) as in the input. They are stable:
// edges of one row keep their relative order, so sorted rows stay sorted.
#pragma once

#include <vector>

#include "graph/formats.h"

namespace gsparse {

CSR coo_to_csr(const COO &coo);
COO csr_to_coo(const CSR &csr);
CSC csr_to_csc(const CSR &csr);
CSR csc_to_csr(const CSC &csc);
/// The transpose as a CSR (rows become sources): the graph with every edge reversed, same ids.
CSR transpose(const CSR &csr);
/// COO ordered by edge id (position i holds edge i), with identity edge_ids. Throws GraphError when
/// edge ids are not a permutation.
COO coo_in_edge_order(const CSR &csr);

/// The edges of a COO in destination order (csr_to_coo with edge ids filled in), regrouped by tiles
/// of `tile` consecutive source ids: ordered by (col / tile, row, col), stably, so within a tile the
/// edges keep their destination order. Throws GraphError unless tile >= 1.
COO group_by_source_tiles(const COO &by_dst, int64_t tile);

/// Sorts the column indices of each row (edge ids move with them).
void sort_rows(CSR &csr);

/// balancedIdx: the row ids ordered by row length, longest first; ties by ascending row id.
std::vector<index_t> balanced_index(const CSR &csr);

GraphStats compute_stats(const CSR &csr);

}  // namespace gsparse
