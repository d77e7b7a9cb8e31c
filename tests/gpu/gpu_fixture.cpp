#include "gpu/gpu_fixture.h"

namespace gsparse::test {

namespace {

void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void GpuTest::SetUp() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no CUDA device";
    check(cudaFree(nullptr), "cudaFree(0)");
    // The driver API is reached through the runtime, so the test binary loads without libcuda.
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    check(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found),
          "cudaGetDriverEntryPointByVersion");
    CUcontext ctx = nullptr;
    if (!fn || reinterpret_cast<CUresult (*)(CUcontext *)>(fn)(&ctx) != CUDA_SUCCESS || !ctx)
        GTEST_SKIP() << "no current CUDA context";
    check(cudaStreamCreate(&stream_), "cudaStreamCreate");
    launch_.context = ctx;
    launch_.stream = stream_;
}

void GpuTest::TearDown() {
    if (stream_) cudaStreamSynchronize(stream_);
    allocations_.clear();
    if (stream_) cudaStreamDestroy(stream_);
}

Tensor GpuTest::device_empty(const std::vector<int64_t> &shape, DType dtype) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    size_t bytes = std::max<size_t>(1, static_cast<size_t>(n) * dtype_size(dtype));
    void *p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    allocations_.emplace_back(p, [](void *q) { cudaFree(q); });
    return Tensor::wrap(p, shape, dtype, Device::CUDA);
}

Tensor GpuTest::to_device(const Tensor &host) {
    Tensor d = device_empty(host.shape(), host.dtype());
    check(cudaMemcpy(d.data(), host.data(), host.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    return d;
}

Tensor GpuTest::to_host(const Tensor &dev) {
    sync();
    Tensor h = Tensor::empty(dev.shape(), dev.dtype());
    check(cudaMemcpy(h.data(), dev.data(), dev.nbytes(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return h;
}

OpOptions GpuTest::options(const ScheduleParams *schedule) const {
    OpOptions o;
    if (schedule) o.schedule = *schedule;
    o.cuda = launch_;
    return o;
}

void GpuTest::sync() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

}  // namespace gsparse::test
