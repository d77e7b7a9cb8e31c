// Runs emitted CUDA g-SDDMM kernels the way an application does: on its own CUcontext and CUstream
// (created with the CUDA driver API), on device memory it allocated, and compares every output with
// plain loops on the host. The graph's edge count is not a multiple of any edge tile (the last
// block reads the padding of CudaCoo's copies). Also checks that a kernel is queued on the
// application's stream (captured into a CUDA graph instead of run), that misaligned operands and a
// graph of another context are refused, and a graph without edges. Prints "[  SKIPPED ]" without a
// GPU and "GPU OK" on success.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "score.h"
#include "u_add_e.h"
#include "v_copy.h"

namespace {

bool ok = true;

void check(CUresult r, const char *what) {
    if (r != CUDA_SUCCESS) {
        const char *name = nullptr;
        cuGetErrorName(r, &name);
        std::fprintf(stderr, "%s failed: %s\n", what, name ? name : "?");
        std::exit(1);
    }
}

void expect(const char *what, bool pass) {
    std::printf("%-60s %s\n", what, pass ? "ok" : "WRONG");
    ok &= pass;
}

void expect_rc(const char *what, int rc, int want, const gsparse_kernels::CudaLaunch &launch) {
    std::printf("%-60s rc %d (want %d) %s\n", what, rc, want, launch.error.c_str());
    ok &= rc == want;
}

CUdeviceptr upload(const std::vector<float> &host) {
    CUdeviceptr p = 0;
    check(cuMemAlloc(&p, std::max<size_t>(host.size(), 1) * sizeof(float)), "cuMemAlloc");
    if (!host.empty()) check(cuMemcpyHtoD(p, host.data(), host.size() * sizeof(float)), "cuMemcpyHtoD");
    return p;
}

std::vector<float> download(CUdeviceptr p, size_t n) {
    std::vector<float> host(n);
    check(cuMemcpyDtoH(host.data(), p, n * sizeof(float)), "cuMemcpyDtoH");
    return host;
}

float *ptr(CUdeviceptr p) { return reinterpret_cast<float *>(static_cast<uintptr_t>(p)); }

bool close(const std::vector<float> &got, const std::vector<double> &want) {
    for (size_t i = 0; i < want.size(); i++)
        if (!(std::fabs(got[i] - want[i]) <= 1e-4 * (1 + std::fabs(want[i])))) {
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
    int devices = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
        std::printf("[  SKIPPED ] no CUDA device\n");
        return 0;
    }
    CUdevice dev;
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    CUcontext ctx = nullptr, other_ctx = nullptr;
    check(cuCtxCreate(&ctx, nullptr, 0, dev), "cuCtxCreate");
    CUstream stream = nullptr;
    check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

    // 2500 edges u -> v, u in [0, 300), v in [0, 200), edge id = position.
    const int32_t num_src = 300, num_dst = 200, E = 2500;
    std::mt19937 rng(11);
    std::vector<int32_t> src(E), dst(E);
    for (int32_t e = 0; e < E; e++) src[e] = static_cast<int32_t>(rng() % num_src), dst[e] = static_cast<int32_t>(rng() % num_dst);
    const auto hu = random_features(rng, num_src * 64), hv = random_features(rng, num_dst * 64);
    const auto x = random_features(rng, num_src * 8), w = random_features(rng, E), hv3 = random_features(rng, num_dst * 3);
    std::vector<double> s_ref(E), y_ref(E * 8), c_ref(E * 3);
    for (int32_t e = 0; e < E; e++) {
        for (int f = 0; f < 64; f++) s_ref[e] += double(hu[src[e] * 64 + f]) * hv[dst[e] * 64 + f];
        for (int f = 0; f < 8; f++) y_ref[e * 8 + f] = double(x[src[e] * 8 + f]) + w[e];
        for (int f = 0; f < 3; f++) c_ref[e * 3 + f] = hv3[dst[e] * 3 + f];
    }
    const CUdeviceptr d_hu = upload(hu), d_hv = upload(hv), d_x = upload(x), d_w = upload(w), d_hv3 = upload(hv3);
    const std::vector<float> nans(E * 8, NAN);
    const CUdeviceptr d_s = upload(nans), d_y = upload(nans), d_c = upload(nans);

    CudaLaunch launch{ctx, stream, {}};
    CudaCoo coo;
    expect_rc("prepare the COO graph", coo.prepare(launch, E, num_src, num_dst, src.data(), dst.data()), kOk, launch);
    expect_rc("score (u dot v, vector loads)", score(launch, coo, ptr(d_hu), ptr(d_hv), ptr(d_s)), kOk, launch);
    expect_rc("u_add_e", u_add_e(launch, coo, ptr(d_x), ptr(d_w), ptr(d_y)), kOk, launch);
    expect_rc("v_copy (1024-edge tiles)", v_copy(launch, coo, ptr(d_hv3), nullptr, ptr(d_c)), kOk, launch);
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    expect("score matches plain loops", close(download(d_s, E), s_ref));
    expect("u_add_e matches plain loops", close(download(d_y, E * 8), y_ref));
    {
        const auto c = download(d_c, E * 8);
        expect("v_copy matches plain loops", close(c, c_ref));
        expect("v_copy writes only num_edges rows", std::isnan(c[E * 3]));
    }

    // The kernel is queued on launch.stream: captured into a CUDA graph, it runs only when launched.
    check(cuMemcpyHtoD(d_s, nans.data(), E * sizeof(float)), "cuMemcpyHtoD");
    CUgraph graph = nullptr;
    check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
    const int captured = score(launch, coo, ptr(d_hu), ptr(d_hv), ptr(d_s));
    check(cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    expect_rc("score captured from the stream", captured, kOk, launch);
    expect("the captured kernel has not run", std::isnan(download(d_s, E)[0]));
    CUgraphExec exec = nullptr;
    check(cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
    check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    expect("the launched capture computes score", close(download(d_s, E), s_ref));
    cuGraphExecDestroy(exec);
    cuGraphDestroy(graph);

    // Refused: misaligned operands of the vector loads, a graph of another context.
    expect_rc("score on a misaligned lhs", score(launch, coo, ptr(d_hu) + 1, ptr(d_hv), ptr(d_s)), kBadAlignment, launch);
    check(cuCtxCreate(&other_ctx, nullptr, 0, dev), "cuCtxCreate");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CudaLaunch other{other_ctx, nullptr, {}};
    expect_rc("graph of another context", score(other, coo, ptr(d_hu), ptr(d_hv), ptr(d_s)), kBadContext, other);

    // A graph without edges: nothing is written.
    CudaCoo empty;
    expect_rc("prepare a graph without edges", empty.prepare(launch, 0, 4, 4, nullptr, nullptr), kOk, launch);
    check(cuMemcpyHtoD(d_y, nans.data(), E * 8 * sizeof(float)), "cuMemcpyHtoD");
    expect_rc("u_add_e on it", u_add_e(launch, empty, ptr(d_x), ptr(d_w), ptr(d_y)), kOk, launch);
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    expect("out untouched", std::isnan(download(d_y, 1)[0]));

    coo.release();
    empty.release();
    expect_rc("cuda_release", cuda_release(launch), kOk, launch);
    for (CUdeviceptr p : {d_hu, d_hv, d_x, d_w, d_hv3, d_s, d_y, d_c}) cuMemFree(p);
    cuStreamDestroy(stream);
    cuCtxDestroy(other_ctx);
    cuCtxDestroy(ctx);
    std::printf("%s\n", ok ? "GPU OK" : "GPU FAILED");
    return ok ? 0 : 1;
}
