// Calls the backward that gsparse-compile --gradients derived for the emitted user program
// weighted_sum (out[v] = sum over in-edges of x[u] * w[e]): weighted_sum_grad_x on the reverse graph
// (dx[u] = sum over u's out-edges of G[v] * w[e]) and the per-edge weighted_sum_grad_w
// (dw[e] = sum over f of G[v, f] * x[u, f], its features summed here since w is broadcast), on the
// small graph of main.cpp, and checks both against plain loops. Prints OK when they agree.
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "weighted_sum_grad_w.h"
#include "weighted_sum_grad_x.h"

int main() {
    const int F = 4, n = 5;
    const std::vector<int32_t> row_ptr = {0, 2, 2, 5, 6, 8};
    const std::vector<int32_t> col_idx = {1, 3, 0, 2, 0, 4, 2, 2};
    const std::vector<int32_t> edge_ids = {7, 0, 5, 1, 6, 2, 3, 4};
    const int E = static_cast<int>(col_idx.size());
    // The COO in edge-id order, and the reverse graph's CSR (rows are the sources, same edge ids).
    std::vector<int32_t> src(E), dst(E), rev_ptr(n + 1, 0), rev_col(E), rev_eid(E);
    for (int v = 0; v < n; ++v)
        for (int p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
            src[edge_ids[p]] = col_idx[p];
            dst[edge_ids[p]] = v;
            rev_ptr[col_idx[p] + 1]++;
        }
    for (int u = 0; u < n; ++u) rev_ptr[u + 1] += rev_ptr[u];
    std::vector<int32_t> fill(rev_ptr.begin(), rev_ptr.end() - 1);
    for (int v = 0; v < n; ++v)
        for (int p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
            const int q = fill[col_idx[p]]++;
            rev_col[q] = v;
            rev_eid[q] = edge_ids[p];
        }
    int rev_max = 0;
    for (int u = 0; u < n; ++u) rev_max = std::max(rev_max, rev_ptr[u + 1] - rev_ptr[u]);

    Halide::Runtime::Buffer<float> x(F, n), w(1, E), grad(F, n), dx(F, n), dw_f(F, E);
    for (int u = 0; u < n; ++u)
        for (int f = 0; f < F; ++f) x(f, u) = std::sin(1.0f + u * F + f);
    for (int e = 0; e < E; ++e) w(0, e) = 0.5f + 0.25f * e;
    for (int v = 0; v < n; ++v)
        for (int f = 0; f < F; ++f) grad(f, v) = std::cos(0.5f + v * F + f);
    Halide::Runtime::Buffer<int32_t> rp(rev_ptr.data(), n + 1), ci(rev_col.data(), E), ei(rev_eid.data(), E);
    Halide::Runtime::Buffer<int32_t> si(src.data(), E), di(dst.data(), E);
    int rc = weighted_sum_grad_x(rp, ci, ei, w, grad, rev_max, E, n, dx);
    if (rc == 0) rc = weighted_sum_grad_w(si, di, x, grad, E, n, n, dw_f);
    if (rc != 0) {
        std::printf("a gradient program returned %d\n", rc);
        return 1;
    }
    int bad = 0;
    for (int u = 0; u < n; ++u)
        for (int f = 0; f < F; ++f) {
            float want = 0;
            for (int e = 0; e < E; ++e)
                if (src[e] == u) want += grad(f, dst[e]) * w(0, e);
            if (std::abs(dx(f, u) - want) > 1e-5f && bad++ < 5)
                std::printf("dx[%d, %d] = %g, expected %g\n", u, f, dx(f, u), want);
        }
    for (int e = 0; e < E; ++e) {
        float got = 0, want = 0;
        for (int f = 0; f < F; ++f) {
            got += dw_f(f, e);
            want += grad(f, dst[e]) * x(f, src[e]);
        }
        if (std::abs(got - want) > 1e-5f && bad++ < 5) std::printf("dw[%d] = %g, expected %g\n", e, got, want);
    }
    if (bad) {
        std::printf("MISMATCH\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
