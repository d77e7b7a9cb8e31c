// Typed entry points of emitted g-SDDMM kernels (runtime/aot.cpp compiles them): the wrapper header
// of a CPU kernel (COO arrays and host feature pointers) and of a CUDA kernel (a CudaCoo prepared
// on the device, device feature pointers, the application's context and stream).
#pragma once

#include <string>

#include "ops/sddmm_algorithm.h"
#include "runtime/sddmm_kernel.h"

namespace gsparse {

/// The return codes every wrapper header defines (guarded, so several headers can be included).
extern const char *const kKernelErrorCodes;

/// gsparse_kernels::<name>(num_edges, num_src, num_dst, src_idx, dst_idx, lhs, rhs, out, validate).
std::string sddmm_wrapper_source(const SddmmKernelKey &key, const SddmmAlgorithm &a, const std::string &name);

/// gsparse_kernels::<name>(CudaLaunch &, CudaCoo &, lhs, rhs, out) on device pointers.
std::string cuda_sddmm_wrapper_source(const SddmmKernelKey &key, const SddmmAlgorithm &a, const std::string &name);

}  // namespace gsparse
