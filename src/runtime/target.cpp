#include "runtime/target.h"

#include <cstdio>
#include <mutex>

#include "core/error.h"

namespace gsparse {

void install_runtime_error_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        // Runtime calls outside a realization (device copies, frees, the runtime's own setup) report
        // errors through the JIT's default handler, which aborts the process; an out-of-memory
        // device must give an error the caller can handle instead. The failing call returns its
        // error code, which gsparse turns into an exception; realizations keep their own handler.
        Halide::JITHandlers handlers = Halide::Internal::JITSharedRuntime::set_default_handlers({});
        handlers.custom_error = [](Halide::JITUserContext *, const char *message) {
            std::fprintf(stderr, "gsparse: Halide runtime: %s", message);
        };
        Halide::Internal::JITSharedRuntime::set_default_handlers(handlers);
    });
}

Halide::Target jit_target(Device device, bool large_buffers) {
    Halide::Target t = Halide::get_host_target();
    if (large_buffers) t.set_feature(Halide::Target::LargeBuffers);
    if (device == Device::CUDA) {
        t.set_feature(Halide::Target::CUDA);
        t.set_feature(Halide::Target::CUDACapability80);
    }
    return t;
}

void jit_compile(Halide::Pipeline &pipeline, const Halide::Target &target, Device device, const std::string &what) {
    install_runtime_error_handler();
    if (device == Device::CUDA) Halide::Internal::JITSharedRuntime::reuse_device_allocations(true);
    try {
        pipeline.compile_jit(target);
    } catch (const Halide::Error &e) {
        fail<KernelError>("compiling ", what, " failed: ", e.what());
    }
}

}  // namespace gsparse
