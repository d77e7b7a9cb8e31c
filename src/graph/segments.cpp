#include "graph/segments.h"

#include <algorithm>

#include "core/error.h"

namespace gsparse {

RowSegments split_row_segments(const CSR &csr, int64_t segment_len) {
    if (segment_len < 1) fail<GraphError>("segment length ", segment_len, " must be >= 1");
    RowSegments s;
    s.row_segs.reserve(static_cast<size_t>(csr.num_rows + 1));
    s.seg_ptr.reserve(static_cast<size_t>(csr.num_rows + csr.nnz() / segment_len + 1));
    for (int64_t v = 0; v < csr.num_rows; v++) {
        s.row_segs.push_back(static_cast<index_t>(s.seg_ptr.size()));
        int32_t segs = 0;
        for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; p += segment_len, segs++) {
            s.seg_ptr.push_back(static_cast<index_t>(p));
            s.max_segment_len = std::max<int32_t>(s.max_segment_len,
                                                  static_cast<int32_t>(std::min<int64_t>(segment_len, csr.row_ptr[v + 1] - p)));
        }
        s.max_segments = std::max(s.max_segments, segs);
    }
    s.row_segs.push_back(static_cast<index_t>(s.seg_ptr.size()));
    s.seg_ptr.push_back(static_cast<index_t>(csr.nnz()));
    return s;
}

std::vector<index_t> segment_rows(const RowSegments &segs) {
    if (!segs.seg_ids.empty()) fail<GraphError>("segment_rows: segments listed through seg_ids have no row order");
    std::vector<index_t> rows(static_cast<size_t>(segs.num_segs()));
    for (size_t v = 0; v + 1 < segs.row_segs.size(); ++v)
        for (index_t s = segs.row_segs[v]; s < segs.row_segs[v + 1]; ++s) rows[static_cast<size_t>(s)] = static_cast<index_t>(v);
    return rows;
}

RowTails row_tails(const CSR &csr, int64_t tail_len) {
    if (tail_len < 1) fail<GraphError>("tail length ", tail_len, " must be >= 1");
    RowTails t;
    for (int64_t v = 0; v < csr.num_rows; v++) {
        const int64_t end = csr.row_ptr[static_cast<size_t>(v + 1)];
        for (int64_t p = csr.row_ptr[static_cast<size_t>(v)] + tail_len; p < end; p += tail_len) {
            t.tail_start.push_back(static_cast<index_t>(p));
            t.tail_end.push_back(static_cast<index_t>(std::min(p + tail_len, end)));
            t.tail_row.push_back(static_cast<index_t>(v));
        }
    }
    return t;
}

RowSegments source_tile_segments(const COO &tiled, int64_t tile, int64_t segment_len) {
    if (tile < 1) fail<GraphError>("source tile ", tile, " must be >= 1");
    if (segment_len < 0) fail<GraphError>("segment length ", segment_len, " must be >= 0");
    const int64_t nnz = tiled.nnz(), rows = tiled.num_rows;
    RowSegments s;
    std::vector<int32_t> count(static_cast<size_t>(rows), 0);
    int64_t prev_tile = -1, prev_row = -1, run = 0;
    for (int64_t i = 0; i < nnz; i++) {
        const int64_t t = tiled.col[static_cast<size_t>(i)] / tile, v = tiled.row[static_cast<size_t>(i)];
        if (v < 0 || v >= rows) fail<GraphError>("edge ", i, " has destination ", v, " outside [0, ", rows, ")");
        if (t < prev_tile || (t == prev_tile && v < prev_row))
            fail<GraphError>("edges are not grouped by source tile and destination at position ", i);
        if (t != prev_tile || v != prev_row || (segment_len > 0 && run == segment_len)) {
            if (!s.seg_ptr.empty()) s.max_segment_len = std::max<int32_t>(s.max_segment_len, static_cast<int32_t>(run));
            s.seg_ptr.push_back(static_cast<index_t>(i));
            count[static_cast<size_t>(v)]++;
            run = 0;
        }
        prev_tile = t, prev_row = v, run++;
    }
    if (!s.seg_ptr.empty()) s.max_segment_len = std::max<int32_t>(s.max_segment_len, static_cast<int32_t>(run));
    s.seg_ptr.push_back(static_cast<index_t>(nnz));

    // Each row's segments, in segment (tile) order.
    s.row_segs.assign(static_cast<size_t>(rows + 1), 0);
    for (int64_t v = 0; v < rows; v++) {
        s.row_segs[static_cast<size_t>(v + 1)] = s.row_segs[static_cast<size_t>(v)] + count[static_cast<size_t>(v)];
        s.max_segments = std::max(s.max_segments, count[static_cast<size_t>(v)]);
    }
    s.seg_ids.resize(static_cast<size_t>(s.num_segs()));
    std::vector<index_t> fill(s.row_segs.begin(), s.row_segs.end() - 1);
    for (int64_t seg = 0; seg < s.num_segs(); seg++) {
        const auto v = static_cast<size_t>(tiled.row[static_cast<size_t>(s.seg_ptr[static_cast<size_t>(seg)])]);
        s.seg_ids[static_cast<size_t>(fill[v]++)] = static_cast<index_t>(seg);
    }
    return s;
}

}  // namespace gsparse
