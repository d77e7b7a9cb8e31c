// Status checks for the CUDA runtime (cudaError_t), the CUDA driver (CUresult) and cuSPARSE
// (cusparseStatus_t). A failed call throws gsparse::bench::CudaError (a gsparse::Error) whose
// message names the call, the source file and line, and the library's error name and string:
//
//   GSPARSE_CUDA_CHECK(cudaMalloc(&p, bytes));
//   GSPARSE_CU_CHECK(cuCtxGetCurrent(&ctx));
//   GSPARSE_CUSPARSE_CHECK(cusparseCreate(&handle));
//
// The *_status_string functions give the message text without throwing, for code that records an
// error (a cuSPARSE algorithm that rejects a configuration) instead of failing.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <string>

#include "core/error.h"

namespace gsparse::bench {

/// A failed CUDA runtime, driver or cuSPARSE call.
class CudaError : public gsparse::Error {
public:
    using gsparse::Error::Error;
};

inline std::string cuda_status_string(cudaError_t status) {
    return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

inline std::string cu_status_string(CUresult status) {
    const char *name = nullptr;
    const char *text = nullptr;
    if (cuGetErrorName(status, &name) != CUDA_SUCCESS || !name) name = "CUDA driver error";
    if (cuGetErrorString(status, &text) != CUDA_SUCCESS || !text) text = "unknown error";
    return std::string(name) + " (" + std::to_string(static_cast<int>(status)) + "): " + text;
}

inline std::string cusparse_status_string(cusparseStatus_t status) {
    const char *name = cusparseGetErrorName(status);
    const char *text = cusparseGetErrorString(status);
    return std::string(name ? name : "CUSPARSE_STATUS_?") + " (" + std::to_string(static_cast<int>(status)) +
           "): " + (text ? text : "unknown error");
}

namespace detail {

[[noreturn]] inline void throw_cuda_error(const char *lib, const char *expr, const char *file, int line,
                                          const std::string &status) {
    throw CudaError(std::string(lib) + " call " + expr + " failed at " + file + ":" + std::to_string(line) + ": " +
                    status);
}

}  // namespace detail

inline void check_cuda(cudaError_t status, const char *expr, const char *file, int line) {
    if (status != cudaSuccess) detail::throw_cuda_error("CUDA runtime", expr, file, line, cuda_status_string(status));
}

inline void check_cu(CUresult status, const char *expr, const char *file, int line) {
    if (status != CUDA_SUCCESS) detail::throw_cuda_error("CUDA driver", expr, file, line, cu_status_string(status));
}

inline void check_cusparse(cusparseStatus_t status, const char *expr, const char *file, int line) {
    if (status != CUSPARSE_STATUS_SUCCESS)
        detail::throw_cuda_error("cuSPARSE", expr, file, line, cusparse_status_string(status));
}

}  // namespace gsparse::bench

#define GSPARSE_CUDA_CHECK(expr) ::gsparse::bench::check_cuda((expr), #expr, __FILE__, __LINE__)
#define GSPARSE_CU_CHECK(expr) ::gsparse::bench::check_cu((expr), #expr, __FILE__, __LINE__)
#define GSPARSE_CUSPARSE_CHECK(expr) ::gsparse::bench::check_cusparse((expr), #expr, __FILE__, __LINE__)
