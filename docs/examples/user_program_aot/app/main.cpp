// Calls the emitted user program weighted_max on a small graph (a CSR written out by hand, an
// empty row, a self-loop, a duplicate edge, edge ids that are not positions) and checks it against
// a plain loop. Prints OK when they agree.
#include <HalideBuffer.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "weighted_max.h"

int main() {
    const int F = 8, n = 5;
    // In-edges of each destination v: sources col_idx[row_ptr[v] .. row_ptr[v + 1]), edge ids alongside.
    std::vector<int32_t> row_ptr = {0, 2, 2, 5, 6, 8};
    std::vector<int32_t> col_idx = {1, 3, 0, 2, 0, 4, 2, 2};
    std::vector<int32_t> edge_ids = {7, 0, 5, 1, 6, 2, 3, 4};
    const int E = static_cast<int>(col_idx.size());
    Halide::Runtime::Buffer<float> x(F, n), w(1, E), out(F, n);
    for (int u = 0; u < n; ++u)
        for (int f = 0; f < F; ++f) x(f, u) = std::sin(1.0f + u * F + f);
    for (int e = 0; e < E; ++e) w(0, e) = 0.5f + 0.25f * e;
    Halide::Runtime::Buffer<int32_t> rp(row_ptr.data(), n + 1), ci(col_idx.data(), E), ei(edge_ids.data(), E);
    int max_degree = 0;
    for (int v = 0; v < n; ++v) max_degree = std::max(max_degree, row_ptr[v + 1] - row_ptr[v]);
    // The inputs live on the host: a library emitted for CUDA copies them to the device, and its
    // output comes back with copy_to_host (both no-ops for a CPU library).
    rp.set_host_dirty();
    ci.set_host_dirty();
    ei.set_host_dirty();
    x.set_host_dirty();
    w.set_host_dirty();
    int rc = weighted_max(rp, ci, ei, x, w, max_degree, E, n, out);
    if (rc == 0) rc = out.copy_to_host();
    if (rc != 0) {
        std::printf("weighted_max returned %d\n", rc);
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
    std::printf("OK\n");
    return 0;
}
