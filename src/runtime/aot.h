// Ahead-of-time emission of g-SpMM kernels as C++ libraries that applications link without the
// JIT or the tuner: a static library and header from Halide's AOT compiler, plus a header of ours
// with a typed entry point over CSR arrays and feature pointers that checks its arguments and
// returns error codes instead of aborting.
#pragma once

#include <string>

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

}  // namespace gsparse
