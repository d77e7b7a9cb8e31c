// The CUDA parts of ahead-of-time emission (runtime/aot.cpp): the typed entry point of a g-SpMM
// kernel compiled for the CUDA target, the shared Halide runtime library of CUDA kernels, and the
// support headers they include (src/runtime/emitted/gsparse_cuda.h and src/graph/locality_order.h,
// embedded at build time).
#pragma once

#include <string>

#include "ops/spmm_algorithm.h"
#include "runtime/spmm_kernel.h"

namespace gsparse {

/// The text of gsparse_cuda.h, written next to emitted CUDA kernels.
extern const char *const kCudaSupportHeader;
/// The text of src/graph/locality_order.h, written next to emitted CUDA kernels as
/// gsparse_locality_order.h (gsparse_cuda.h includes it for rowBalance = 2).
extern const char *const kLocalityOrderHeader;

/// The wrapper header of a CUDA kernel: gsparse_kernels::<name>(CudaLaunch &, CudaGraph &,
/// features...) calling <name>_halide with the launch as user_context.
std::string cuda_wrapper_source(const SpmmKernelKey &key, const SpmmAlgorithm &a, const std::string &name);

/// Writes <dir>/gsparse_cuda_runtime.a, Halide's runtime for target (CUDA kernels are compiled
/// without one, so any number of them link against this single copy). The file is replaced
/// atomically, so kernels emitted concurrently into one folder may each write it.
std::string emit_cuda_runtime(const Halide::Target &target, const std::string &dir);

}  // namespace gsparse
