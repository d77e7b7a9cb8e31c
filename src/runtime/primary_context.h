// The primary CUDA context of a device (the one the CUDA runtime API, and so PyTorch and cudart
// applications, run in), found through the driver API loaded with dlopen("libcuda.so.1"): nothing
// here links CUDA, so the library loads on machines without a GPU.
#pragma once

#include <cstddef>
#include <string>

namespace gsparse {

/// The primary context of CUDA device `device`, retained once per device and kept for the life of
/// the process. Throws gsparse::KernelError naming the failing driver call when the driver or the
/// device is missing.
void *primary_cuda_context(int device);

/// Copies bytes from device memory to host memory on `stream` of `context` (device 0's primary
/// context when null) and waits for the stream: the read-back of a validated graph build. Throws
/// KernelError when the driver or a call fails.
void cuda_read_back(void *context, void *stream, void *host, const void *device, size_t bytes);

/// Where a call runs: `context` when given, else device 0's primary context, so that calls without
/// a CUDA context (JIT pipelines and cached kernel libraries alike) all meet in one context. Never
/// throws: nullptr when the driver or the device is missing, the reason appended to *why if given.
void *context_or_primary(void *context, std::string *why = nullptr) noexcept;

}  // namespace gsparse
