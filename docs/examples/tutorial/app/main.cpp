// Calls the emitted gated_sum (docs/tutorial.md) on a small graph with an empty row, a self-loop
// and edge ids that are not CSR positions, and checks it against a plain loop. Prints OK when
// they agree.
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "gated_sum.h"

int main() {
    const int F = 16, n = 5;
    // In-edges of destination v: sources col_idx[row_ptr[v] .. row_ptr[v + 1]), their edge ids alongside.
    std::vector<int32_t> row_ptr = {0, 2, 2, 5, 6, 8};
    std::vector<int32_t> col_idx = {1, 3, 0, 2, 0, 4, 2, 2};
    std::vector<int32_t> edge_ids = {7, 0, 5, 1, 6, 2, 3, 4};
    const int E = static_cast<int>(col_idx.size());
    Halide::Runtime::Buffer<float> x(F, n), gate(1, E), out(F, n);  // feature dimension first
    for (int u = 0; u < n; ++u)
        for (int f = 0; f < F; ++f) x(f, u) = std::sin(1.0f + u * F + f);
    for (int e = 0; e < E; ++e) gate(0, e) = 0.5f * e - 1.5f;
    Halide::Runtime::Buffer<int32_t> rp(row_ptr.data(), n + 1), ci(col_idx.data(), E), ei(edge_ids.data(), E);
    int max_degree = 0;
    for (int v = 0; v < n; ++v) max_degree = std::max(max_degree, row_ptr[v + 1] - row_ptr[v]);
    if (int rc = gated_sum(rp, ci, ei, x, gate, max_degree, E, n, out)) {
        std::printf("gated_sum returned %d\n", rc);
        return 1;
    }
    int bad = 0;
    for (int v = 0; v < n; ++v)
        for (int f = 0; f < F; ++f) {
            float want = 0;
            for (int p = row_ptr[v]; p < row_ptr[v + 1]; ++p)
                want += x(f, col_idx[p]) / (1.0f + std::exp(-gate(0, edge_ids[p])));
            if (std::abs(out(f, v) - want) > 1e-5f * (1.0f + std::abs(want)) && bad++ < 5)
                std::printf("out[%d, %d] = %g, expected %g\n", v, f, out(f, v), want);
        }
    std::printf(bad ? "MISMATCH\n" : "OK\n");
    return bad ? 1 : 0;
}
