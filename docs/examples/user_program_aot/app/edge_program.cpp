// Calls the emitted per-edge user program gat_score_grad (GAT's score gradient, one value per edge)
// on the small graph of main.cpp as a COO in edge-id order and checks it against a plain loop.
// Prints OK when they agree.
#include <HalideBuffer.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "gat_score_grad.h"

int main() {
    const int n = 5;
    // Edge e goes from src[e] to dst[e] (edge-id order).
    std::vector<int32_t> src = {3, 2, 0, 2, 2, 0, 0, 1};
    std::vector<int32_t> dst = {0, 2, 3, 4, 4, 2, 2, 0};
    const int E = static_cast<int>(src.size());
    Halide::Runtime::Buffer<float> a_src(1, n), a_dst(1, n), lse(1, n), c(1, n), dalpha(1, E), out(1, E);
    for (int v = 0; v < n; ++v) {
        a_src(0, v) = std::sin(1.0f + v);
        a_dst(0, v) = std::cos(2.0f + v);
        lse(0, v) = 0.5f + 0.1f * v;
        c(0, v) = 0.3f - 0.2f * v;
    }
    for (int e = 0; e < E; ++e) dalpha(0, e) = 0.25f * e - 0.5f;
    Halide::Runtime::Buffer<int32_t> s(src.data(), E), d(dst.data(), E);
    const int rc = gat_score_grad(s, d, a_src, a_dst, lse, dalpha, c, E, n, n, out);
    if (rc != 0) {
        std::printf("gat_score_grad returned %d\n", rc);
        return 1;
    }
    int bad = 0;
    for (int e = 0; e < E; ++e) {
        const float pre = a_src(0, src[e]) + a_dst(0, dst[e]);
        const float alpha = std::exp((pre > 0 ? pre : 0.2f * pre) - lse(0, dst[e]));
        const float want = (pre > 0 ? 1.f : 0.2f) * alpha * (dalpha(0, e) - c(0, dst[e]));
        if (std::abs(out(0, e) - want) > 1e-5f * (1 + std::abs(want)) && bad++ < 5)
            std::printf("edge %d: %g, expected %g\n", e, out(0, e), want);
    }
    if (bad) {
        std::printf("MISMATCH\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
