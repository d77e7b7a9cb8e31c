// Calls three emitted g-SDDMM kernels on a random bipartite COO graph (more edges than one parallel
// task, duplicate edges) and checks them against plain loops; then checks that bad arguments come
// back as error codes without touching memory. Prints OK on success.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "e_mul_v.h"
#include "gsparse_dispatch.h"
#include "score.h"
#include "u_add_e.h"

namespace {

bool ok = true;

void expect(const char *what, bool pass) {
    std::printf("%-52s %s\n", what, pass ? "ok" : "WRONG");
    ok &= pass;
}

void expect_rc(const char *what, int rc, int want) {
    std::printf("%-52s rc %d (want %d)%s\n", what, rc, want, rc == want ? "" : "  <-- WRONG");
    ok &= rc == want;
}

bool close(const std::vector<float> &got, const std::vector<double> &want) {
    for (size_t i = 0; i < want.size(); i++)
        if (!(std::fabs(got[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])))) {
            std::printf("  first difference at %zu: %g vs %g\n", i, got[i], want[i]);
            return false;
        }
    return true;
}

std::vector<float> random_features(std::mt19937 &rng, size_t n) {
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> v(n);
    for (float &x : v) x = dist(rng);
    return v;
}

}  // namespace

int main() {
    using namespace gsparse_kernels;
    // 300 edges u -> v with u in [0, 40) and v in [0, 30), edge id = position; two duplicates.
    const int32_t num_src = 40, num_dst = 30, E = 300;
    std::mt19937 rng(7);
    std::vector<int32_t> src(E), dst(E);
    for (int32_t e = 0; e < E; e++) src[e] = static_cast<int32_t>(rng() % num_src), dst[e] = static_cast<int32_t>(rng() % num_dst);
    src[5] = src[4], dst[5] = dst[4];
    src[E - 1] = num_src - 1, dst[E - 1] = num_dst - 1;

    // u_dot_v, F = 12 (vector width 8 leaves a tail), 64 edges per task.
    const auto hu = random_features(rng, num_src * 12), hv = random_features(rng, num_dst * 12);
    std::vector<float> s(E, NAN);
    expect_rc("score (u dot v)", score(E, num_src, num_dst, src.data(), dst.data(), hu.data(), hv.data(), s.data()), kOk);
    std::vector<double> s_ref(E);
    for (int32_t e = 0; e < E; e++)
        for (int f = 0; f < 12; f++) s_ref[e] += double(hu[src[e] * 12 + f]) * hv[dst[e] * 12 + f];
    expect("score matches plain loops", close(s, s_ref));

    // u_add_e, F = 5, one weight per edge broadcast over the features; dst_idx not read.
    const auto x = random_features(rng, num_src * 5), w = random_features(rng, E);
    std::vector<float> y(E * 5, NAN);
    expect_rc("u_add_e (no dst_idx)", u_add_e(E, num_src, num_dst, src.data(), nullptr, x.data(), w.data(), y.data()), kOk);
    std::vector<double> y_ref(E * 5);
    for (int32_t e = 0; e < E; e++)
        for (int f = 0; f < 5; f++) y_ref[e * 5 + f] = double(x[src[e] * 5 + f]) + w[e];
    expect("u_add_e matches plain loops", close(y, y_ref));

    // e_mul_v, F = 8: edge features times destination features; src_idx not read.
    const auto m = random_features(rng, E * 8), hv8 = random_features(rng, num_dst * 8);
    std::vector<float> z(E * 8, NAN);
    expect_rc("e_mul_v (no src_idx)", e_mul_v(E, num_src, num_dst, nullptr, dst.data(), m.data(), hv8.data(), z.data()), kOk);
    std::vector<double> z_ref(E * 8);
    for (int32_t e = 0; e < E; e++)
        for (int f = 0; f < 8; f++) z_ref[e * 8 + f] = double(m[e * 8 + f]) * hv8[dst[e] * 8 + f];
    expect("e_mul_v matches plain loops", close(z, z_ref));

    // A graph without edges writes nothing and needs no arrays.
    expect_rc("no edges", score(0, num_src, num_dst, nullptr, nullptr, nullptr, nullptr, nullptr), kOk);

    // Argument errors: codes, never an abort, out untouched.
    std::vector<float> untouched(E, -7.f);
    float *o = untouched.data();
    const int32_t *S = src.data(), *D = dst.data();
    expect_rc("negative edge count", score(-1, num_src, num_dst, S, D, hu.data(), hv.data(), o), kBadShape);
    expect_rc("negative node count", score(E, num_src, -3, S, D, hu.data(), hv.data(), o), kBadShape);
    expect_rc("null out", score(E, num_src, num_dst, S, D, hu.data(), hv.data(), nullptr), kNullPointer);
    expect_rc("null lhs", score(E, num_src, num_dst, S, D, nullptr, hv.data(), o), kNullPointer);
    expect_rc("null rhs (edge weights)", u_add_e(E, num_src, num_dst, S, D, x.data(), nullptr, y.data()), kNullPointer);
    expect_rc("null src_idx", score(E, num_src, num_dst, nullptr, D, hu.data(), hv.data(), o), kNullPointer);
    expect_rc("null dst_idx", score(E, num_src, num_dst, S, nullptr, hu.data(), hv.data(), o), kNullPointer);
    expect_rc("source id out of range", score(E, num_src - 1, num_dst, S, D, hu.data(), hv.data(), o), kBadGraph);
    std::vector<int32_t> bad_dst(dst);
    bad_dst[100] = -1;
    expect_rc("negative destination id", score(E, num_src, num_dst, S, bad_dst.data(), hu.data(), hv.data(), o), kBadGraph);
    // 2^28 nodes of 12 features exceed 32-bit indexing: refused before any array is read.
    expect_rc("tensor too large for 32-bit indexing",
              score(E, int32_t(1) << 28, num_dst, S, D, hu.data(), hv.data(), o), kBadShape);
    expect_rc("output too large for 32-bit indexing",
              u_add_e(int32_t(1) << 29, num_src, num_dst, S, D, x.data(), w.data(), y.data()), kBadShape);
    bool same = true;
    for (float v : untouched) same &= v == -7.f;
    expect("out untouched by refused calls", same);

    // Entry points of one operator and dtype share a type.
    Dispatcher<score_fn> d;
    d.add(score, 12);
    expect("dispatcher selects score for F = 12", d.select(12, 0) == &score && d.select(8, 0) == nullptr);

    std::printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
