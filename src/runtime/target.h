// Halide targets gsparse compiles for.
#pragma once

#include <Halide.h>

#include <string>

#include "core/tensor.h"

namespace gsparse {

/// Routes errors of JIT runtime calls made outside a realization to stderr instead of the JIT's
/// default handler (which aborts): the call's error code then becomes a gsparse exception. Once
/// per process; every JIT entry point calls it.
void install_runtime_error_handler();

/// The JIT target for a device: the host CPU, or the host plus CUDA (capability 80) for Device::CUDA.
/// Targets carry large_buffers (64-bit indexing: feature tensors of big graphs exceed 2^31 elements)
/// unless the caller knows every buffer is smaller; Halide's warp-shuffle lowering needs 32-bit
/// indexing.
Halide::Target jit_target(Device device, bool large_buffers = true);

/// JIT-compiles pipeline for target (KernelError naming what when Halide fails). On CUDA, device
/// buffers of intermediate stages are kept between calls instead of reallocated.
void jit_compile(Halide::Pipeline &pipeline, const Halide::Target &target, Device device, const std::string &what);

/// Whether a buffer of this many elements needs large_buffers.
inline bool needs_large_buffers(int64_t elements) { return elements >= (int64_t(1) << 31) - 1; }

}  // namespace gsparse
