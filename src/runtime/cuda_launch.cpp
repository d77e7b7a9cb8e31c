#include "runtime/cuda_launch.h"

#include <mutex>
#include <utility>
#include <vector>

#include "core/error.h"
#include "runtime/primary_context.h"
#include "runtime/target.h"

namespace gsparse {

namespace {

// Without a context in the launch: device 0's primary context (the CUDA runtime API's), the one
// cached kernel libraries use too (kernel_library.cpp), rather than one the JIT runtime would create
// for itself. A null context makes Halide report that none could be acquired.
int32_t acquire_context(Halide::JITUserContext *user_context, void **cuda_context, bool) {
    *cuda_context = context_or_primary(static_cast<CudaJITContext *>(user_context)->launch().context);
    return *cuda_context ? 0 : -1;
}

int32_t release_context(Halide::JITUserContext *) { return 0; }

int32_t get_stream(Halide::JITUserContext *user_context, void *, void **stream) {
    *stream = static_cast<CudaJITContext *>(user_context)->launch().stream;
    return 0;
}

}  // namespace

CudaJITContext::CudaJITContext(const CudaLaunch &launch) : launch_(launch) {
    handlers.custom_cuda_acquire_context = acquire_context;
    handlers.custom_cuda_release_context = release_context;
    handlers.custom_cuda_get_stream = get_stream;
}

void CudaJITContext::capture_errors() {
    handlers.custom_error = [](Halide::JITUserContext *uc, const char *message) {
        static_cast<CudaJITContext *>(uc)->errors_ += message;
    };
}

const halide_device_interface_t *cuda_device_interface(const Halide::Target &target) {
    // Halide looks the interface up in its shared JIT runtime (a lock, a vector of modules and a
    // symbol search) on every call; kernels wrap several buffers per launch, so the answer is kept
    // per target.
    static std::mutex mu;
    static std::vector<std::pair<Halide::Target, const halide_device_interface_t *>> known;
    std::lock_guard<std::mutex> lock(mu);
    for (const auto &[t, iface] : known)
        if (t == target) return iface;
    install_runtime_error_handler();  // before the runtime's first use
    const halide_device_interface_t *iface =
        Halide::get_device_interface_for_device_api(Halide::DeviceAPI::CUDA, target, "gsparse");
    known.emplace_back(target, iface);
    return iface;
}

Halide::Buffer<> wrap_device_buffer(Halide::Type type, void *device_ptr, const std::vector<int> &sizes,
                                    const Halide::Target &target, const char *name) {
    if (!device_ptr) fail<ShapeError>("null device pointer for ", name);
    Halide::Buffer<> b(type, nullptr, sizes, name);
    int err = b.device_wrap_native(cuda_device_interface(target), reinterpret_cast<uint64_t>(device_ptr));
    if (err) fail<KernelError>("wrapping device pointer of ", name, " failed (Halide error ", err, ")");
    return b;
}

}  // namespace gsparse
