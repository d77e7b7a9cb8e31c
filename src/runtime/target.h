// Halide targets gsparse compiles for.
#pragma once

#include <Halide.h>

#include "core/tensor.h"

namespace gsparse {

/// The JIT target for a device: the host CPU, or the host plus CUDA (capability 80) for Device::CUDA.
/// Every target carries large_buffers: feature tensors of big graphs exceed 2^31 bytes.
Halide::Target jit_target(Device device);

}  // namespace gsparse
