// Argument checking of emitted CUDA g-SDDMM kernels, without a GPU: every case below must come back
// as an error code with a message before any CUDA call (this program never loads the CUDA driver).
// Prints OK on success.
#include <cstdio>
#include <string>
#include <vector>

#include "gsparse_dispatch.h"
#include "score.h"
#include "u_add_e.h"
#include "v_copy.h"

namespace {

bool ok = true;

void expect(const char *what, int rc, int want, const gsparse_kernels::CudaLaunch &launch, const char *mention) {
    const bool pass = rc == want && launch.error.find(mention) != std::string::npos;
    std::printf("%-44s rc %d (want %d): %s%s\n", what, rc, want, launch.error.c_str(), pass ? "" : "  <-- WRONG");
    ok &= pass;
}

}  // namespace

int main() {
    using namespace gsparse_kernels;
    // 3 edges: 0 -> 1, 2 -> 0, 1 -> 1 (3 source and 2 destination nodes).
    const std::vector<int32_t> src = {0, 2, 1}, dst = {1, 0, 1};
    void *not_a_context = reinterpret_cast<void *>(0x10);  // never reaches the driver: all calls fail first
    CudaLaunch none;
    CudaLaunch launch{not_a_context, nullptr, {}};
    CudaCoo coo;

    expect("prepare: null context", coo.prepare(none, 3, 3, 2, src.data(), dst.data()), kNullPointer, none, "context");
    expect("prepare: negative num_dst", coo.prepare(launch, 3, 3, -2, src.data(), dst.data()), kBadShape, launch,
           "num_dst = -2");
    expect("prepare: null src_idx", coo.prepare(launch, 3, 3, 2, nullptr, dst.data()), kNullPointer, launch, "src_idx");
    expect("prepare: null dst_idx", coo.prepare(launch, 3, 3, 2, src.data(), nullptr), kNullPointer, launch, "dst_idx");
    expect("prepare: source id out of range", coo.prepare(launch, 3, 2, 2, src.data(), dst.data()), kBadGraph, launch,
           "src_idx[1] = 2");
    expect("prepare: destination id out of range", coo.prepare(launch, 3, 3, 1, src.data(), dst.data()), kBadGraph,
           launch, "dst_idx[0] = 1");
    ok &= !coo.prepared();

    // Device pointers that are never dereferenced (every call fails before reaching the GPU).
    float *h = reinterpret_cast<float *>(0x1000), *g = reinterpret_cast<float *>(0x2000);
    float *out = reinterpret_cast<float *>(0x3000), *misaligned = reinterpret_cast<float *>(0x1004);
    expect("kernel: null context", score(none, coo, h, g, out), kNullPointer, none, "context");
    expect("kernel: null out", score(launch, coo, h, g, nullptr), kNullPointer, launch, "out");
    expect("kernel: null lhs", score(launch, coo, nullptr, g, out), kNullPointer, launch, "lhs");
    expect("kernel: null edge weights", u_add_e(launch, coo, h, nullptr, out), kNullPointer, launch, "rhs");
    expect("kernel: misaligned lhs (vector loads)", score(launch, coo, misaligned, g, out), kBadAlignment, launch,
           "16-byte aligned");
    expect("kernel: misaligned rhs (vector loads)", score(launch, coo, h, misaligned, out), kBadAlignment, launch, "rhs");
    expect("kernel: unprepared graph", score(launch, coo, h, g, out), kBadGraph, launch, "not prepared");
    expect("kernel: unprepared graph (copy)", v_copy(launch, coo, misaligned, nullptr, out), kBadGraph, launch,
           "not prepared");

    Dispatcher<score_fn> dispatch;
    dispatch.add(score, 64);
    ok &= dispatch.select(64, 1.0) == &score && dispatch.select(32, 1.0) == nullptr;

    std::printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
