// The primary CUDA context of a device (the one the CUDA runtime API, and so PyTorch and cudart
// applications, run in), found through the driver API loaded with dlopen("libcuda.so.1"): nothing
// here links CUDA, so the library loads on machines without a GPU.
#pragma once

namespace gsparse {

/// The primary context of CUDA device `device`, retained once per device and kept for the life of
/// the process. Throws gsparse::KernelError naming the failing driver call when the driver or the
/// device is missing.
void *primary_cuda_context(int device);

}  // namespace gsparse
