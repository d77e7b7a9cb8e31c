// Primary CUDA contexts and the read-back of graph builds through the driver API, loaded with
// dlopen at first use.
#include "runtime/primary_context.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "core/error.h"

namespace gsparse {

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUstream = void *;
using CUdeviceptr = unsigned long long;

struct Driver {
    CUresult (*init)(unsigned) = nullptr;
    CUresult (*device_get)(CUdevice *, int) = nullptr;
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice) = nullptr;
    CUresult (*ctx_push)(CUcontext) = nullptr;
    CUresult (*ctx_pop)(CUcontext *) = nullptr;
    CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream) = nullptr;
    CUresult (*stream_synchronize)(CUstream) = nullptr;
};

template <typename F>
void load_symbol(void *lib, const char *name, F &fn) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (!fn) fail<KernelError>("the CUDA driver (libcuda.so.1) has no symbol ", name);
}

const Driver &driver() {
    static Driver d;
    static std::once_flag once;
    std::call_once(once, [] {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (!lib) return;
        load_symbol(lib, "cuInit", d.init);
        load_symbol(lib, "cuDeviceGet", d.device_get);
        load_symbol(lib, "cuDevicePrimaryCtxRetain", d.primary_ctx_retain);
        load_symbol(lib, "cuCtxPushCurrent_v2", d.ctx_push);
        load_symbol(lib, "cuCtxPopCurrent_v2", d.ctx_pop);
        load_symbol(lib, "cuMemcpyDtoHAsync_v2", d.memcpy_dtoh_async);
        load_symbol(lib, "cuStreamSynchronize", d.stream_synchronize);
    });
    if (!d.init) fail<KernelError>("CUDA tensors need the CUDA driver, but libcuda.so.1 could not be loaded");
    return d;
}

void check(CUresult r, const char *call, int device) {
    if (r != 0) fail<KernelError>(call, " failed for CUDA device ", device, " (CUresult ", r, ")");
}

}  // namespace

void *primary_cuda_context(int device) {
    static std::mutex mu;
    static std::map<int, CUcontext> contexts;
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = contexts.find(device); it != contexts.end()) return it->second;
    const Driver &d = driver();
    check(d.init(0), "cuInit", device);
    CUdevice dev = 0;
    check(d.device_get(&dev, device), "cuDeviceGet", device);
    CUcontext ctx = nullptr;
    check(d.primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain", device);
    contexts[device] = ctx;
    return ctx;
}

void *context_or_primary(void *context, std::string *why) noexcept {
    if (context) return context;
    try {
        return primary_cuda_context(0);
    } catch (const std::exception &e) {
        if (why) *why += e.what();
        return nullptr;
    }
}

void cuda_read_back(void *context, void *stream, void *host, const void *device, size_t bytes) {
    const Driver &d = driver();
    void *ctx = context ? context : primary_cuda_context(0);
    if (d.ctx_push(ctx) != 0) fail<KernelError>("cuCtxPushCurrent failed while reading back ", bytes, " bytes");
    CUresult r = d.memcpy_dtoh_async(host, reinterpret_cast<CUdeviceptr>(device), bytes, stream);
    if (r == 0) r = d.stream_synchronize(stream);
    CUcontext popped = nullptr;
    d.ctx_pop(&popped);
    if (r != 0)
        fail<KernelError>("reading back ", bytes, " bytes from the device failed (CUresult ", r,
                          "): an earlier kernel on this stream may have failed");
}

}  // namespace gsparse
