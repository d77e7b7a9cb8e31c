// Ahead-of-time emission of g-SpMM and g-SDDMM kernels as C++ libraries that applications link without the
// JIT or the tuner: a static library and header from Halide's AOT compiler, plus a header of ours
// with a typed entry point over the graph's index arrays (CSR for g-SpMM, COO for g-SDDMM) and feature pointers that checks its arguments and
// returns error codes instead of aborting.
#pragma once

#include <string>

#include "runtime/sddmm_kernel.h"
#include "runtime/spmm_kernel.h"

namespace gsparse {

struct EmittedKernel {
    std::string name;            ///< C++ entry point gsparse_kernels::<name>
    std::string library;         ///< <dir>/<name>.a
    std::string halide_header;   ///< <dir>/<name>_halide.h
    std::string wrapper_header;  ///< <dir>/<name>.h (include this one)
    std::string runtime;         ///< CUDA: <dir>/gsparse_cuda_runtime.a, Halide's runtime shared by the folder's kernels
};

/// Compiles key into dir: for the CPU, or for CUDA (host code plus PTX, entry point on the
/// application's context and stream; also writes gsparse_cuda.h and gsparse_cuda_runtime.a). name must be a C identifier. Throws ScheduleError for an
/// invalid schedule, KernelError for other failures, Error for I/O problems.
EmittedKernel emit_spmm_library(const SpmmKernelKey &key, const std::string &dir, const std::string &name);

/// The same for a g-SDDMM kernel. Emitted kernels index with 32 bits whatever key.large_buffers
/// says (their entry points refuse tensors of 2^31 elements or more).
EmittedKernel emit_sddmm_library(const SddmmKernelKey &key, const std::string &dir, const std::string &name);

}  // namespace gsparse
