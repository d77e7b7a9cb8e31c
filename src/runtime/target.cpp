#include "runtime/target.h"

#include "core/error.h"

namespace gsparse {

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
    if (device == Device::CUDA) Halide::Internal::JITSharedRuntime::reuse_device_allocations(true);
    try {
        pipeline.compile_jit(target);
    } catch (const Halide::Error &e) {
        fail<KernelError>("compiling ", what, " failed: ", e.what());
    }
}

}  // namespace gsparse
