// The CUDA context PyTorch uses for a device, found at call time through the CUDA driver API loaded
// with dlopen("libcuda.so.1"), so that the module links nothing from CUDA and imports on machines
// without a GPU.
#pragma once

namespace gsparse::python {

/// The primary context of CUDA device `device` (the context PyTorch runs in), retained once per
/// device and kept for the life of the process. Throws gsparse::KernelError naming the failing
/// driver call when the driver or the device is missing.
void *primary_cuda_context(int device);

}  // namespace gsparse::python
