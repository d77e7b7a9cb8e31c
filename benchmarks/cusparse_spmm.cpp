#include "cusparse_spmm.h"

#include <library_types.h>

namespace gsparse::bench {

namespace {

/// Throws CudaError with cuSPARSE's status string (used inside setup, where it is caught and recorded).
void check_step(cusparseStatus_t st, const char *step) {
    if (st != CUSPARSE_STATUS_SUCCESS) throw CudaError(std::string(step) + ": " + cusparse_status_string(st));
}

}  // namespace

CusparseHandle::CusparseHandle(cudaStream_t stream) : stream_(stream) {
    GSPARSE_CUSPARSE_CHECK(cusparseCreate(&handle_));
    const cusparseStatus_t st = cusparseSetStream(handle_, stream_);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        cusparseDestroy(handle_);
        check_cusparse(st, "cusparseSetStream(handle, stream)", __FILE__, __LINE__);
    }
}

CusparseHandle::~CusparseHandle() {
    if (handle_) cusparseDestroy(handle_);
}

std::string CusparseHandle::version_string() {
    int major = 0, minor = 0, patch = 0;
    GSPARSE_CUSPARSE_CHECK(cusparseGetProperty(MAJOR_VERSION, &major));
    GSPARSE_CUSPARSE_CHECK(cusparseGetProperty(MINOR_VERSION, &minor));
    GSPARSE_CUSPARSE_CHECK(cusparseGetProperty(PATCH_LEVEL, &patch));
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

DeviceCsrPattern DeviceCsrPattern::upload(const CSR &csr) {
    DeviceCsrPattern d;
    d.num_rows = csr.num_rows;
    d.num_cols = csr.num_cols;
    d.nnz = csr.nnz();
    d.row_ptr = DeviceBuffer<int32_t>(csr.row_ptr);
    d.col_idx = DeviceBuffer<int32_t>(csr.col_idx);
    return d;
}

std::vector<CusparseAlgorithm> default_cusparse_algorithms() {
    return {
        {CUSPARSE_SPMM_ALG_DEFAULT, "ALG_DEFAULT", false},
        {CUSPARSE_SPMM_CSR_ALG1, "CSR_ALG1", true},
        {CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2", false},
        {CUSPARSE_SPMM_CSR_ALG3, "CSR_ALG3", true},
    };
}

const CusparseAlgResult *best_of(const std::vector<CusparseAlgResult> &results) {
    const CusparseAlgResult *best = nullptr;
    for (const auto &r : results)
        if (r.ok && (!best || r.timing.median_ms < best->timing.median_ms)) best = &r;
    return best;
}

CusparseSpmm::CusparseSpmm(const CusparseHandle &handle, const Problem &problem,
                           std::vector<CusparseAlgorithm> algorithms)
    : handle_(handle), p_(problem) {
    algs_.reserve(algorithms.size());
    for (auto &spec : algorithms) {
        algs_.emplace_back();
        algs_.back().spec = std::move(spec);
    }
    for (auto &alg : algs_) {
        try {
            setup(alg);
        } catch (const std::exception &e) {
            alg.error = e.what();
            destroy(alg);
        }
    }
    // Preprocessing runs on the stream: finish it (and surface asynchronous errors) before timing.
    GSPARSE_CUDA_CHECK(cudaStreamSynchronize(handle_.stream()));
}

CusparseSpmm::~CusparseSpmm() {
    for (auto &alg : algs_) destroy(alg);
}

void CusparseSpmm::destroy(Alg &alg) noexcept {
    if (alg.a) cusparseDestroySpMat(alg.a);
    if (alg.b) cusparseDestroyDnMat(alg.b);
    if (alg.c) cusparseDestroyDnMat(alg.c);
    alg.a = nullptr;
    alg.b = nullptr;
    alg.c = nullptr;
    alg.workspace.release();
}

void CusparseSpmm::setup(Alg &alg) {
    // cuSPARSE's generic API takes non-const pointers; it does not write A or X.
    check_step(cusparseCreateCsr(&alg.a, p_.num_rows, p_.num_cols, p_.nnz, const_cast<int32_t *>(p_.row_ptr),
                                 const_cast<int32_t *>(p_.col_idx), const_cast<float *>(p_.values),
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
               "cusparseCreateCsr");
    check_step(cusparseCreateDnMat(&alg.b, p_.num_cols, p_.feat, p_.feat, const_cast<float *>(p_.x), CUDA_R_32F,
                                   CUSPARSE_ORDER_ROW),
               "cusparseCreateDnMat(X)");
    check_step(cusparseCreateDnMat(&alg.c, p_.num_rows, p_.feat, p_.feat, p_.z, CUDA_R_32F, CUSPARSE_ORDER_ROW),
               "cusparseCreateDnMat(Z)");
    const float alpha = 1.0f, beta = 0.0f;
    size_t bytes = 0;
    check_step(cusparseSpMM_bufferSize(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, alg.a, alg.b, &beta, alg.c,
                                       CUDA_R_32F, alg.spec.alg, &bytes),
               "cusparseSpMM_bufferSize");
    alg.workspace_bytes = bytes;
    if (bytes) alg.workspace.allocate(bytes);
    if (alg.spec.preprocess) {
        check_step(cusparseSpMM_preprocess(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, alg.a, alg.b, &beta, alg.c,
                                           CUDA_R_32F, alg.spec.alg, alg.workspace.data()),
                   "cusparseSpMM_preprocess");
        alg.preprocessed = true;
    }
}

int CusparseSpmm::first_usable() const {
    for (size_t i = 0; i < algs_.size(); ++i)
        if (usable(i)) return static_cast<int>(i);
    return -1;
}

void CusparseSpmm::run(size_t i) {
    Alg &alg = algs_.at(i);
    if (!alg.error.empty()) throw CudaError("cuSPARSE " + alg.spec.name + " is not usable: " + alg.error);
    const float alpha = 1.0f, beta = 0.0f;
    const cusparseStatus_t st =
        cusparseSpMM(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, alg.a,
                     alg.b, &beta, alg.c, CUDA_R_32F, alg.spec.alg, alg.workspace.data());
    if (st != CUSPARSE_STATUS_SUCCESS) throw CudaError("cusparseSpMM(" + alg.spec.name + "): " + cusparse_status_string(st));
}

std::vector<CusparseAlgResult> CusparseSpmm::time_all(EventTimer &timer) {
    std::vector<CusparseAlgResult> results;
    for (size_t i = 0; i < algs_.size(); ++i) {
        Alg &alg = algs_[i];
        CusparseAlgResult r;
        r.name = alg.spec.name;
        r.preprocessed = alg.preprocessed;
        r.workspace_bytes = alg.workspace_bytes;
        if (!alg.error.empty()) {
            r.error = alg.error;
        } else {
            try {
                r.timing = timer.time([&] { run(i); });
                r.ok = true;
            } catch (const std::exception &e) {
                r.error = e.what();
                alg.error = r.error;
            }
        }
        results.push_back(std::move(r));
    }
    return results;
}

std::vector<float> CusparseSpmm::output(size_t i) {
    const size_t n = static_cast<size_t>(p_.num_rows) * static_cast<size_t>(p_.feat);
    if (n) GSPARSE_CUDA_CHECK(cudaMemsetAsync(p_.z, 0, n * sizeof(float), handle_.stream()));
    run(i);
    GSPARSE_CUDA_CHECK(cudaStreamSynchronize(handle_.stream()));
    std::vector<float> z(n);
    if (n) GSPARSE_CUDA_CHECK(cudaMemcpy(z.data(), p_.z, n * sizeof(float), cudaMemcpyDeviceToHost));
    return z;
}

}  // namespace gsparse::bench
