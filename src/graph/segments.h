// Row segments: the units of work of row-split g-SpMM. A segment is a run of consecutive positions
// of an edge list that all belong to one row; a row's result combines its segments' results.
//
//  - Row split (split_row_segments): every CSR row cut into runs of at most segment_len nonzeros;
//    a row's segments are consecutive.
//  - Source tiles (source_tile_segments): the edges in the order of Graph::coo_by_dst(tile), that
//    is by (source / tile, destination, position), cut wherever the destination or the tile changes
//    (and after segment_len nonzeros when segment_len > 0). Segments come tile by tile, so the
//    segments that run together gather the features of one tile of sources, which stay in cache;
//    a row's segments are listed in seg_ids (row_segs(v) .. row_segs(v+1)), in tile order.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/formats.h"

namespace gsparse {

struct RowSegments {
    std::vector<index_t> seg_ptr;   ///< num_segs + 1 offsets into the edge list
    std::vector<index_t> row_segs;  ///< num_rows + 1 offsets into seg_ids (or segment ids when seg_ids is empty)
    std::vector<index_t> seg_ids;   ///< the segments of each row; empty when a row's segments are consecutive
    int32_t max_segments = 0;       ///< most segments of one row
    int32_t max_segment_len = 0;    ///< longest segment

    int64_t num_segs() const { return seg_ptr.empty() ? 0 : static_cast<int64_t>(seg_ptr.size()) - 1; }
};

/// Row tails: the units of the row-tail form of g-SpMM (ops/spmm_algorithm.h, split_row_tails).
/// Every row longer than tail_len keeps its first tail_len nonzeros (reduced with the row) and the
/// rest is cut into tails of at most tail_len consecutive positions: tail t covers positions
/// [tail_start[t], tail_end[t]) of row tail_row[t], tail_len of them or up to the row's end. Tails
/// come in row order.
struct RowTails {
    std::vector<index_t> tail_start;  ///< the first position of each tail
    std::vector<index_t> tail_end;    ///< one past the last position of each tail
    std::vector<index_t> tail_row;    ///< the row of each tail

    int64_t num_tails() const { return static_cast<int64_t>(tail_row.size()); }
};

/// The tails of csr's rows for tail_len (>= 1); GraphError for tail_len < 1.
RowTails row_tails(const CSR &csr, int64_t tail_len);

/// Every row of csr cut into segments of at most segment_len (>= 1) nonzeros. Throws GraphError
/// for segment_len < 1.
RowSegments split_row_segments(const CSR &csr, int64_t segment_len);

/// The row of every segment of a split whose rows' segments are consecutive (split_row_segments):
/// entry s is the row v with row_segs[v] <= s < row_segs[v + 1]. GraphError for segments listed
/// through seg_ids (source tiles).
std::vector<index_t> segment_rows(const RowSegments &segs);

/// Segments of the edge list `tiled` (Graph::coo_by_dst(tile): grouped by source tiles, then by
/// destination) cut at every change of destination or source tile, and after segment_len nonzeros
/// when segment_len > 0. Throws GraphError when tile < 1, segment_len < 0, or the edges are not
/// grouped that way.
RowSegments source_tile_segments(const COO &tiled, int64_t tile, int64_t segment_len);

}  // namespace gsparse
