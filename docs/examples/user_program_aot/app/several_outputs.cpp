// Calls the emitted user program weighted_sum_and_mean (two outputs from one pass: the weighted sum
// and the weighted mean of every node's in-edges) on the small graph of main.cpp and checks both
// outputs against a plain loop. Prints OK when they agree.
#include <HalideBuffer.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "weighted_sum_and_mean.h"

int main() {
    const int F = 4, n = 5;
    std::vector<int32_t> row_ptr = {0, 2, 2, 5, 6, 8};
    std::vector<int32_t> col_idx = {1, 3, 0, 2, 0, 4, 2, 2};
    std::vector<int32_t> edge_ids = {7, 0, 5, 1, 6, 2, 3, 4};
    const int E = static_cast<int>(col_idx.size());
    Halide::Runtime::Buffer<float> x(F, n), w(1, E), sum(F, n), mean(F, n);
    for (int u = 0; u < n; ++u)
        for (int f = 0; f < F; ++f) x(f, u) = std::sin(1.0f + u * F + f);
    for (int e = 0; e < E; ++e) w(0, e) = 0.5f + 0.25f * e;
    Halide::Runtime::Buffer<int32_t> rp(row_ptr.data(), n + 1), ci(col_idx.data(), E), ei(edge_ids.data(), E);
    int max_degree = 0;
    for (int v = 0; v < n; ++v) max_degree = std::max(max_degree, row_ptr[v + 1] - row_ptr[v]);
    const int rc = weighted_sum_and_mean(rp, ci, ei, x, w, max_degree, E, n, sum, mean);
    if (rc != 0) {
        std::printf("weighted_sum_and_mean returned %d\n", rc);
        return 1;
    }
    int bad = 0;
    for (int v = 0; v < n; ++v)
        for (int f = 0; f < F; ++f) {
            float want = 0;
            for (int p = row_ptr[v]; p < row_ptr[v + 1]; ++p) want += x(f, col_idx[p]) * w(0, edge_ids[p]);
            const int deg = row_ptr[v + 1] - row_ptr[v];
            const float want_mean = deg ? want / static_cast<float>(deg) : 0.f;
            if (std::abs(sum(f, v) - want) > 1e-5f || std::abs(mean(f, v) - want_mean) > 1e-5f) {
                if (bad++ < 5)
                    std::printf("row %d feature %d: sum %g mean %g, expected %g and %g\n", v, f, sum(f, v), mean(f, v),
                                want, want_mean);
            }
        }
    if (bad) {
        std::printf("MISMATCH\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
