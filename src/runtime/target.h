// Halide targets gsparse compiles for.
#pragma once

#include <Halide.h>

#include "core/tensor.h"

namespace gsparse {

/// The JIT target for a device: the host CPU, or the host plus CUDA (capability 80) for Device::CUDA.
/// Targets carry large_buffers (64-bit indexing: feature tensors of big graphs exceed 2^31 elements)
/// unless the caller knows every buffer is smaller; Halide's warp-shuffle lowering needs 32-bit
/// indexing.
Halide::Target jit_target(Device device, bool large_buffers = true);

/// Whether a buffer of this many elements needs large_buffers.
inline bool needs_large_buffers(int64_t elements) { return elements >= (int64_t(1) << 31) - 1; }

}  // namespace gsparse
