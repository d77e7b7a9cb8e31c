// Primary CUDA contexts through the driver API, loaded with dlopen at first use.
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

struct Driver {
    CUresult (*init)(unsigned) = nullptr;
    CUresult (*device_get)(CUdevice *, int) = nullptr;
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice) = nullptr;
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

}  // namespace gsparse
