// Runs emitted CUDA kernels the way an application does: on its own CUcontext and CUstream
// (created with the CUDA driver API), on device memory it allocated, and compares every output
// with plain loops on the host. Also checks that a kernel is queued on the application's stream
// (captured into a CUDA graph instead of run), that graphs from another context or with the wrong
// kind of edge ids are refused, and a graph without edges. Prints "[  SKIPPED ]" without a GPU
// and "GPU OK" on success.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "agg_local.h"
#include "agg_max.h"
#include "agg_mean.h"
#include "agg_sum.h"
#include "agg_sum16.h"
#include "gsparse_dispatch.h"

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

template <typename T>
CUdeviceptr upload(const std::vector<T> &host) {
    CUdeviceptr p = 0;
    check(cuMemAlloc(&p, std::max<size_t>(host.size(), 1) * sizeof(T)), "cuMemAlloc");
    if (!host.empty()) check(cuMemcpyHtoD(p, host.data(), host.size() * sizeof(T)), "cuMemcpyHtoD");
    return p;
}

template <typename T>
std::vector<T> download(CUdeviceptr p, size_t n) {
    std::vector<T> host(n);
    check(cuMemcpyDtoH(host.data(), p, n * sizeof(T)), "cuMemcpyDtoH");
    return host;
}

template <typename T>
T *ptr(CUdeviceptr p) {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(p));
}

bool close(const std::vector<float> &got, const std::vector<double> &want) {
    for (size_t i = 0; i < want.size(); i++)
        if (!(std::fabs(got[i] - want[i]) <= 1e-4 * (1 + std::fabs(want[i])))) {
            std::printf("  first difference at %zu: %g vs %g\n", i, got[i], want[i]);
            return false;
        }
    return true;
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

    // A graph with a hub (row 0: 300 in-edges, cut into segments by agg_max's schedule), empty rows
    // (5 and the last), duplicate edges and self-loops. Edge id = position in the edge list.
    const int32_t n = 600;
    std::mt19937 rng(7);
    std::vector<int32_t> src, dst;
    for (int i = 0; i < 300; i++) src.push_back(static_cast<int32_t>(rng() % n)), dst.push_back(0);
    for (int i = 0; i < 4000; i++) {
        const int32_t d = static_cast<int32_t>(rng() % (n - 1));
        if (d == 5) continue;
        src.push_back(static_cast<int32_t>(rng() % n)), dst.push_back(d);
    }
    src.push_back(7), dst.push_back(7);
    src.push_back(8), dst.push_back(9), src.push_back(8), dst.push_back(9);
    const int32_t nnz = static_cast<int32_t>(src.size());
    std::vector<int32_t> row_ptr(n + 1, 0), col_idx(nnz), edge_ids(nnz);
    for (int32_t d : dst) row_ptr[d + 1]++;
    for (int32_t v = 0; v < n; v++) row_ptr[v + 1] += row_ptr[v];
    std::vector<int32_t> fill(row_ptr.begin(), row_ptr.end() - 1);
    for (int32_t e = 0; e < nnz; e++) {
        col_idx[fill[dst[e]]] = src[e];
        edge_ids[fill[dst[e]]++] = e;
    }
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    auto random = [&](size_t count) {
        std::vector<float> v(count);
        for (float &x : v) x = uni(rng);
        return v;
    };
    const std::vector<float> x32 = random(n * 32), x16 = random(n * 16), x8 = random(n * 8), x64 = random(n * 64),
                             w1 = random(nnz), w64 = random(static_cast<size_t>(nnz) * 64);
    const CUdeviceptr d_x32 = upload(x32), d_x16 = upload(x16), d_x8 = upload(x8), d_x64 = upload(x64),
                      d_w1 = upload(w1), d_w64 = upload(w64);
    const CUdeviceptr d_zl = upload(std::vector<float>(n * 32));
    const CUdeviceptr d_z32 = upload(std::vector<float>(n * 32)), d_z16 = upload(std::vector<float>(n * 16)),
                      d_z8 = upload(std::vector<float>(n * 8)), d_z64 = upload(std::vector<float>(n * 64)),
                      d_au = upload(std::vector<int32_t>(n * 8)), d_ae = upload(std::vector<int32_t>(n * 8));

    CudaLaunch launch{ctx, stream, {}};
    CudaGraph by_position, mapped;  // edge ids = CSR positions / = edge-list order
    expect_rc("prepare (edge ids = CSR positions)", by_position.prepare(launch, n, n, nnz, row_ptr.data(), col_idx.data()),
              kOk, launch);
    expect_rc("prepare (mapped edge ids)", mapped.prepare(launch, n, n, nnz, row_ptr.data(), col_idx.data(), edge_ids.data()),
              kOk, launch);

    // copy_u_sum at F = 32 and 16, chosen by a dispatcher.
    Dispatcher<agg_sum_fn> sum;
    sum.add(agg_sum, 32);
    sum.add(agg_sum16, 16);
    expect("dispatcher picks by feature length",
           sum.select(32, by_position.avg_row_length()) == &agg_sum && sum.select(16, 1.0) == &agg_sum16);
    expect_rc("agg_sum (F = 32)", sum.select(32, 1.0)(launch, by_position, ptr<float>(d_x32), nullptr, ptr<float>(d_z32)),
              kOk, launch);
    expect_rc("agg_sum16 (F = 16, no shared tile)",
              sum.select(16, 1.0)(launch, by_position, ptr<float>(d_x16), nullptr, ptr<float>(d_z16)), kOk, launch);
    // u_mul_e_max at F = 8 with one weight per edge, mapped edge ids, rows in segments.
    expect_rc("agg_max (segments, mapped edge ids)",
              agg_max(launch, mapped, ptr<float>(d_x8), ptr<float>(d_w1), ptr<float>(d_z8), ptr<int32_t>(d_au),
                      ptr<int32_t>(d_ae)),
              kOk, launch);
    // u_mul_e_mean at F = 64 with 64 weights per edge, rows in balanced order.
    expect_rc("agg_mean (balanced rows)",
              agg_mean(launch, by_position, ptr<float>(d_x64), ptr<float>(d_w64), ptr<float>(d_z64)), kOk, launch);
    // copy_u_sum at F = 32 with rows in the locality order (clustered from the device's col_idx).
    expect_rc("agg_local (locality order)", agg_local(launch, by_position, ptr<float>(d_x32), nullptr, ptr<float>(d_zl)),
              kOk, launch);
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");

    auto reference_sum = [&](const std::vector<float> &x, int f) {
        std::vector<double> z(static_cast<size_t>(n) * f, 0.0);
        for (int32_t v = 0; v < n; v++)
            for (int32_t p = row_ptr[v]; p < row_ptr[v + 1]; p++)
                for (int j = 0; j < f; j++) z[v * f + j] += x[col_idx[p] * f + j];
        return z;
    };
    const std::vector<double> z32_ref = reference_sum(x32, 32);
    expect("agg_sum matches the reference", close(download<float>(d_z32, n * 32), z32_ref));
    expect("agg_sum16 matches the reference", close(download<float>(d_z16, n * 16), reference_sum(x16, 16)));
    expect("agg_local matches the reference", close(download<float>(d_zl, n * 32), z32_ref));
    {
        const auto z = download<float>(d_z8, n * 8);
        const auto au = download<int32_t>(d_au, n * 8), ae = download<int32_t>(d_ae, n * 8);
        bool same = true;
        for (int32_t v = 0; v < n; v++)
            for (int j = 0; j < 8; j++) {
                float best = 0;
                int32_t bu = -1, be = -1;
                for (int32_t p = row_ptr[v]; p < row_ptr[v + 1]; p++) {
                    const float m = x8[col_idx[p] * 8 + j] * w1[edge_ids[p]];
                    if (bu < 0 || m > best) best = m, bu = col_idx[p], be = edge_ids[p];
                }
                same &= z[v * 8 + j] == best && au[v * 8 + j] == bu && ae[v * 8 + j] == be;
            }
        expect("agg_max values and arg ids match the reference", same);
    }
    {
        std::vector<double> ref(static_cast<size_t>(n) * 64, 0.0);
        for (int32_t v = 0; v < n; v++) {
            const int32_t deg = row_ptr[v + 1] - row_ptr[v];
            for (int32_t p = row_ptr[v]; p < row_ptr[v + 1]; p++)
                for (int j = 0; j < 64; j++) ref[v * 64 + j] += double(x64[col_idx[p] * 64 + j]) * w64[p * 64 + j] / deg;
        }
        expect("agg_mean matches the reference", close(download<float>(d_z64, n * 64), ref));
    }

    // The kernel is queued on launch.stream: captured into a CUDA graph, it does not run until the
    // graph is launched.
    check(cuMemsetD32Async(d_z32, 0x7fc00000u, n * 32, stream), "cuMemsetD32Async");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
    const int captured_rc = agg_sum(launch, by_position, ptr<float>(d_x32), nullptr, ptr<float>(d_z32));
    CUgraph graph = nullptr;
    check(cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    expect_rc("agg_sum during stream capture", captured_rc, kOk, launch);
    size_t nodes = 0;
    check(cuGraphGetNodes(graph, nullptr, &nodes), "cuGraphGetNodes");
    expect("the capture holds the kernel launch", nodes >= 1);
    const auto untouched = download<float>(d_z32, n * 32);
    expect("the captured kernel has not run", std::isnan(untouched[0]) && std::isnan(untouched.back()));
    CUgraphExec exec = nullptr;
    check(cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
    check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    expect("the launched capture computes agg_sum", close(download<float>(d_z32, n * 32), z32_ref));
    cuGraphExecDestroy(exec);
    cuGraphDestroy(graph);

    // Refused: a graph of another context, edge ids of the wrong kind.
    check(cuCtxCreate(&other_ctx, nullptr, 0, dev), "cuCtxCreate");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CudaLaunch other{other_ctx, nullptr, {}};
    expect_rc("graph of another context", agg_sum(other, by_position, ptr<float>(d_x32), nullptr, ptr<float>(d_z32)),
              kBadContext, other);
    expect_rc("mapped kernel on a graph without edge ids",
              agg_max(launch, by_position, ptr<float>(d_x8), ptr<float>(d_w1), ptr<float>(d_z8), ptr<int32_t>(d_au),
                      ptr<int32_t>(d_ae)),
              kBadGraph, launch);
    expect_rc("position kernel on a graph with mapped edge ids",
              agg_mean(launch, mapped, ptr<float>(d_x64), ptr<float>(d_w64), ptr<float>(d_z64)), kBadGraph, launch);

    // A graph without edges: every row is 0.
    CudaGraph empty;
    const std::vector<int32_t> empty_rows(5, 0);
    expect_rc("prepare a graph without edges", empty.prepare(launch, 4, 4, 0, empty_rows.data(), nullptr), kOk, launch);
    check(cuMemsetD32Async(d_z32, 0x7fc00000u, n * 32, stream), "cuMemsetD32Async");
    expect_rc("agg_sum on it", agg_sum(launch, empty, ptr<float>(d_x32), nullptr, ptr<float>(d_z32)), kOk, launch);
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    {
        const auto z = download<float>(d_z32, n * 32);
        bool zeros = true;
        for (int i = 0; i < 4 * 32; i++) zeros &= z[i] == 0.f;
        expect("rows without edges are 0 (and only 4 rows written)", zeros && std::isnan(z[4 * 32]));
    }

    by_position.release();
    mapped.release();
    empty.release();
    expect_rc("cuda_release", cuda_release(launch), kOk, launch);
    for (CUdeviceptr p : {d_x32, d_x16, d_x8, d_x64, d_w1, d_w64, d_z32, d_z16, d_z8, d_z64, d_au, d_ae}) cuMemFree(p);
    cuStreamDestroy(stream);
    cuCtxDestroy(other_ctx);
    cuCtxDestroy(ctx);
    std::printf("%s\n", ok ? "GPU OK" : "GPU FAILED");
    return ok ? 0 : 1;
}
