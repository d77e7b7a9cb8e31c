// The GCN forward pass of gcn_forward.cpp with its sparse aggregations on CUDA kernels emitted by
// `gsparse-compile --target cuda`: the application creates its CUDA context and stream with the
// driver API, prepares the graph on the device once, keeps features in its own device memory,
// and runs both layers' aggregations on its stream (dense products stay plain host loops).
//
//   gcn_forward_cuda GRAPH.mtx
#include <cuda.h>

#include "gcn_aggregate_hidden.h"
#include "gcn_aggregate_out.h"
#include "gcn_model.h"

namespace {

bool cuda_ok(CUresult r, const char *what) {
    if (r == CUDA_SUCCESS) return true;
    const char *name = nullptr;
    cuGetErrorName(r, &name);
    std::fprintf(stderr, "%s failed: %s\n", what, name ? name : "?");
    return false;
}

}  // namespace

int main(int argc, char **argv) {
    using namespace gcn;
    if (argc != 2) {
        std::fprintf(stderr, "usage: gcn_forward_cuda GRAPH.mtx\n");
        return 2;
    }
    Graph g;
    if (!load_graph(argv[1], g)) {
        std::fprintf(stderr, "cannot read %s as a square Matrix Market graph\n", argv[1]);
        return 2;
    }
    std::vector<float> x, w1, w2;
    make_inputs(g.n, x, w1, w2);

    int devices = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
        std::fprintf(stderr, "no CUDA device\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    if (!cuda_ok(cuDeviceGet(&dev, 0), "cuDeviceGet") || !cuda_ok(cuCtxCreate(&ctx, nullptr, 0, dev), "cuCtxCreate") ||
        !cuda_ok(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
        return 1;

    // Device memory of the application: node features of both layers and the edge weights.
    const size_t hidden_bytes = sizeof(float) * g.n * kHidden, out_bytes = sizeof(float) * g.n * kOut;
    CUdeviceptr d_xw, d_h, d_hw, d_z, d_norm;
    for (auto [p, bytes] : {std::pair{&d_xw, hidden_bytes}, {&d_h, hidden_bytes}, {&d_hw, out_bytes},
                            {&d_z, out_bytes}, {&d_norm, sizeof(float) * g.nnz}})
        if (!cuda_ok(cuMemAlloc(p, bytes), "cuMemAlloc")) return 1;
    auto dptr = [](CUdeviceptr p) { return reinterpret_cast<float *>(static_cast<uintptr_t>(p)); };

    gsparse_kernels::CudaLaunch launch{ctx, stream, {}};
    int rc;
    {
        gsparse_kernels::CudaGraph graph;  // freed (in ctx) at the end of this scope
        if ((rc = graph.prepare(launch, g.n, g.n, g.nnz, g.row_ptr.data(), g.col_idx.data())) != gsparse_kernels::kOk) {
            std::fprintf(stderr, "preparing the graph failed (%d): %s\n", rc, launch.error.c_str());
            return 1;
        }
        // Layer 1: H = relu(Â (X W1)).
        std::vector<float> xw, h(static_cast<size_t>(g.n) * kHidden), hw, z(static_cast<size_t>(g.n) * kOut);
        dense(x, g.n, kIn, w1, kHidden, xw);
        if (!cuda_ok(cuMemcpyHtoDAsync(d_norm, g.norm.data(), sizeof(float) * g.nnz, stream), "copy weights") ||
            !cuda_ok(cuMemcpyHtoDAsync(d_xw, xw.data(), hidden_bytes, stream), "copy XW1"))
            return 1;
        if ((rc = gsparse_kernels::gcn_aggregate_hidden(launch, graph, dptr(d_xw), dptr(d_norm), dptr(d_h)))) {
            std::fprintf(stderr, "layer 1 kernel failed (%d): %s\n", rc, launch.error.c_str());
            return 1;
        }
        if (!cuda_ok(cuMemcpyDtoHAsync(h.data(), d_h, hidden_bytes, stream), "copy H") ||
            !cuda_ok(cuStreamSynchronize(stream), "cuStreamSynchronize"))
            return 1;
        for (float &v : h) v = std::max(v, 0.f);
        // Layer 2: Z = Â (H W2).
        dense(h, g.n, kHidden, w2, kOut, hw);
        if (!cuda_ok(cuMemcpyHtoDAsync(d_hw, hw.data(), out_bytes, stream), "copy HW2")) return 1;
        if ((rc = gsparse_kernels::gcn_aggregate_out(launch, graph, dptr(d_hw), dptr(d_norm), dptr(d_z)))) {
            std::fprintf(stderr, "layer 2 kernel failed (%d): %s\n", rc, launch.error.c_str());
            return 1;
        }
        if (!cuda_ok(cuMemcpyDtoHAsync(z.data(), d_z, out_bytes, stream), "copy Z") ||
            !cuda_ok(cuStreamSynchronize(stream), "cuStreamSynchronize"))
            return 1;
        rc = compare(g, z, reference(g, x, w1, w2)) ? 0 : 1;
    }
    gsparse_kernels::cuda_release(launch);
    for (CUdeviceptr p : {d_xw, d_h, d_hw, d_z, d_norm}) cuMemFree(p);
    cuStreamDestroy(stream);
    cuCtxDestroy(ctx);
    return rc;
}
