#include "runtime/target.h"

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

}  // namespace gsparse
