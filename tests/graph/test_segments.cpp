// Row segments (graph/segments.h): the units of work of row-split and source-tiled g-SpMM.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "graph/segments.h"
#include "support/random_graph.h"

namespace gsparse::test {
namespace {

TEST(Segments, SplitRowsCutsEveryRowIntoConsecutiveRuns) {
    Graph g = random_graph(81);
    const CSR &csr = g.csr();
    for (int64_t len : {1, 3, 1 << 20}) {
        RowSegments s = split_row_segments(csr, len);
        ASSERT_EQ(s.row_segs.size(), static_cast<size_t>(csr.num_rows + 1));
        EXPECT_TRUE(s.seg_ids.empty());
        EXPECT_EQ(s.seg_ptr.back(), csr.nnz());
        for (int64_t v = 0; v < csr.num_rows; v++) {
            const int64_t first = s.row_segs[v], last = s.row_segs[v + 1];
            const int64_t len_v = csr.row_length(v);
            EXPECT_EQ(last - first, (len_v + len - 1) / len) << "row " << v;
            if (last > first) {
                EXPECT_EQ(s.seg_ptr[first], csr.row_ptr[v]);
                EXPECT_EQ(s.seg_ptr[last], csr.row_ptr[v + 1]);
            }
            for (int64_t seg = first; seg < last; seg++) EXPECT_LE(s.seg_ptr[seg + 1] - s.seg_ptr[seg], len);
        }
    }
    EXPECT_THROW(split_row_segments(csr, 0), GraphError);
}

TEST(Segments, RowTailsCoverEveryPositionPastEachRowsHeadOnce) {
    // Every position of a row beyond its first tail_len lies in exactly one tail of that row, tails
    // start tail_len apart within a row and come in row order; rows of at most tail_len have none.
    Graph g = random_graph(83);
    const CSR &csr = g.csr();
    for (int64_t len : {1, 3, 64, 1 << 20}) {
        RowTails t = row_tails(csr, len);
        ASSERT_EQ(t.tail_start.size(), t.tail_row.size());
        ASSERT_EQ(t.tail_end.size(), t.tail_row.size());
        std::vector<int> covered(static_cast<size_t>(csr.nnz()), 0);
        int64_t expected = 0;
        for (int64_t v = 0; v < csr.num_rows; v++) expected += std::max<int64_t>(0, (csr.row_length(v) - 1) / len);
        EXPECT_EQ(t.num_tails(), expected) << len;
        for (int64_t i = 0; i < t.num_tails(); i++) {
            const int64_t row = t.tail_row[i], start = t.tail_start[i];
            ASSERT_GE(row, 0);
            ASSERT_LT(row, csr.num_rows);
            if (i > 0) EXPECT_LE(t.tail_row[i - 1], row);
            EXPECT_EQ((start - csr.row_ptr[row]) % len, 0) << "tail " << i;
            EXPECT_GE(start, csr.row_ptr[row] + len);
            const int64_t end = std::min<int64_t>(start + len, csr.row_ptr[row + 1]);
            EXPECT_EQ(t.tail_end[i], end) << "tail " << i;
            ASSERT_LT(start, end);
            for (int64_t p = start; p < end; p++) covered[p]++;
        }
        for (int64_t v = 0; v < csr.num_rows; v++)
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; p++)
                EXPECT_EQ(covered[p], p - csr.row_ptr[v] >= len ? 1 : 0) << "row " << v << " position " << p;
    }
    EXPECT_THROW(row_tails(csr, 0), GraphError);
}

TEST(Segments, SourceTileRunsCoverEachRowOnceInTileOrder) {
    RandomGraphOptions opt;
    opt.num_nodes = 300;
    opt.num_src = 250;
    Graph g = random_graph(82, opt);
    for (int64_t tile : {1, 16, 100, 1 << 20})
        for (int64_t len : {0, 2, 5}) {
            const COO &t = g.coo_by_dst(tile);
            const RowSegments &s = g.source_tile_segments(tile, len);
            ASSERT_EQ(s.seg_ptr.front(), 0);
            ASSERT_EQ(s.seg_ptr.back(), t.nnz());
            ASSERT_EQ(s.seg_ids.size(), static_cast<size_t>(s.num_segs()));
            int32_t longest = 0;
            // Each segment: one destination, one tile, at most len nonzeros; a new segment starts
            // only where one of those would break.
            for (int64_t seg = 0; seg < s.num_segs(); seg++) {
                const int64_t b = s.seg_ptr[seg], e = s.seg_ptr[seg + 1];
                ASSERT_LT(b, e) << "empty segment " << seg;
                for (int64_t i = b + 1; i < e; i++) {
                    EXPECT_EQ(t.row[i], t.row[b]);
                    EXPECT_EQ(t.col[i] / tile, t.col[b] / tile);
                }
                if (len > 0) {
                    EXPECT_LE(e - b, len);
                }
                if (seg > 0 && t.row[b] == t.row[b - 1] && t.col[b] / tile == t.col[b - 1] / tile) {
                    EXPECT_EQ(s.seg_ptr[seg] - s.seg_ptr[seg - 1], len) << "segment " << seg << " cut early";
                }
                longest = std::max<int32_t>(longest, static_cast<int32_t>(e - b));
            }
            EXPECT_EQ(s.max_segment_len, longest);
            // Row v lists exactly its segments, in order, and they hold its degree.
            std::vector<int> listed(static_cast<size_t>(s.num_segs()), 0);
            int32_t most = 0;
            for (int64_t v = 0; v < g.num_dst(); v++) {
                int64_t nnz = 0;
                for (int64_t j = s.row_segs[v]; j < s.row_segs[v + 1]; j++) {
                    const index_t seg = s.seg_ids[j];
                    listed[seg]++;
                    EXPECT_EQ(t.row[s.seg_ptr[seg]], v);
                    if (j > s.row_segs[v]) {
                        EXPECT_LT(s.seg_ids[j - 1], seg);
                    }
                    nnz += s.seg_ptr[seg + 1] - s.seg_ptr[seg];
                }
                EXPECT_EQ(nnz, g.csr().row_length(v)) << "row " << v;
                most = std::max<int32_t>(most, s.row_segs[v + 1] - s.row_segs[v]);
            }
            EXPECT_EQ(s.max_segments, most);
            EXPECT_TRUE(std::all_of(listed.begin(), listed.end(), [](int n) { return n == 1; }));
        }
    // Cached per (tile, length).
    EXPECT_EQ(&g.source_tile_segments(16, 0), &g.source_tile_segments(16, 0));
    EXPECT_NE(&g.source_tile_segments(16, 0), &g.source_tile_segments(16, 2));
}

TEST(Segments, SourceTileRunsRejectBadInput) {
    Graph g = random_graph(83);
    EXPECT_THROW(g.source_tile_segments(0, 0), GraphError);
    EXPECT_THROW(source_tile_segments(g.coo_by_dst(8), 8, -1), GraphError);
    // Edges not grouped by tile (the destination order of a graph with several tiles).
    try {
        source_tile_segments(g.coo_by_dst(), 8, 0);
        ADD_FAILURE() << "accepted edges that are not grouped by source tile";
    } catch (const GraphError &e) {
        EXPECT_NE(std::string(e.what()).find("not grouped by source tile"), std::string::npos) << e.what();
    }
    COO bad = g.coo_by_dst(8);
    bad.row[0] = static_cast<index_t>(g.num_dst());
    EXPECT_THROW(source_tile_segments(bad, 8, 0), GraphError);
}

}  // namespace
}  // namespace gsparse::test
