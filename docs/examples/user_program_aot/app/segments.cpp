// Calls weighted_max emitted under a schedule that splits rows into segments
// (gsparse-compile --plugin ... --schedule "user_default{row_segments=256}") on a graph with a row of
// 300 neighbours, an empty row and rows shorter than a segment. A library of such a schedule takes the
// graph's segment table beside its CSR: every row cut into segments of at most 256 positions, in row
// order (seg_ptr: where each segment starts, one past the end last; seg_row: the row of each
// segment; row_segs: each row's first segment, the segment count last), built here as gsparse's
// split_row_segments and segment_rows build it. Prints OK when the result matches a plain loop.
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "weighted_max_segments.h"

int main() {
    const int F = 8, n = 6, L = 256;
    // Row 0: 300 in-edges; row 1: none; rows 2..5: a few each.
    std::vector<int32_t> row_ptr = {0}, col_idx;
    for (int v = 0; v < n; ++v) {
        const int degree = v == 0 ? 300 : v == 1 ? 0 : v + 1;
        for (int k = 0; k < degree; ++k) col_idx.push_back((7 * k + v) % n);
        row_ptr.push_back(static_cast<int32_t>(col_idx.size()));
    }
    const int E = static_cast<int>(col_idx.size());
    std::vector<int32_t> edge_ids(E);
    for (int e = 0; e < E; ++e) edge_ids[e] = (e * 37) % E;  // a permutation (37 and E are coprime)

    // The segment table.
    std::vector<int32_t> seg_ptr, seg_row, row_segs;
    int max_segments = 0, max_segment_len = 0;
    for (int v = 0; v < n; ++v) {
        row_segs.push_back(static_cast<int32_t>(seg_ptr.size()));
        int segments = 0;
        for (int p = row_ptr[v]; p < row_ptr[v + 1]; p += L, ++segments) {
            seg_ptr.push_back(p);
            seg_row.push_back(v);
            max_segment_len = std::max(max_segment_len, std::min(L, row_ptr[v + 1] - p));
        }
        max_segments = std::max(max_segments, segments);
    }
    row_segs.push_back(static_cast<int32_t>(seg_ptr.size()));
    const int num_segs = static_cast<int>(seg_row.size());
    seg_ptr.push_back(E);

    Halide::Runtime::Buffer<float> x(F, n), w(1, E), out(F, n);
    for (int u = 0; u < n; ++u)
        for (int f = 0; f < F; ++f) x(f, u) = std::sin(1.0f + u * F + f);
    for (int e = 0; e < E; ++e) w(0, e) = 0.5f + 0.001f * e;
    Halide::Runtime::Buffer<int32_t> rp(row_ptr.data(), n + 1), ci(col_idx.data(), E), ei(edge_ids.data(), E),
        sp(seg_ptr.data(), num_segs + 1), sr(seg_row.data(), num_segs), rs(row_segs.data(), n + 1);
    int max_degree = 0;
    for (int v = 0; v < n; ++v) max_degree = std::max(max_degree, row_ptr[v + 1] - row_ptr[v]);
    int rc = weighted_max_segments(rp, ci, ei, sp, sr, rs, x, w, max_degree, E, n, num_segs, max_segments,
                                   max_segment_len, out);
    if (rc != 0) {
        std::printf("weighted_max_segments returned %d\n", rc);
        return 1;
    }
    int bad = 0;
    for (int v = 0; v < n; ++v)
        for (int f = 0; f < F; ++f) {
            float want = 0;
            for (int p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
                const float m = x(f, col_idx[p]) * w(0, edge_ids[p]);
                want = p == row_ptr[v] ? m : std::max(want, m);
            }
            if (out(f, v) != want) {
                if (bad++ < 5) std::printf("out[%d, %d] = %g, expected %g\n", v, f, out(f, v), want);
            }
        }
    if (bad) {
        std::printf("MISMATCH\n");
        return 1;
    }
    std::printf("OK (%d segments)\n", num_segs);
    return 0;
}
