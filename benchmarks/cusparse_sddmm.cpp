// The cached cuSPARSE SDDMM baseline and the cusparseGather-based sample reader.
#include "cusparse_sddmm.h"

#include <library_types.h>

#include <algorithm>

#include "cuda_check.h"

namespace gsparse::bench {

namespace {

/// Throws CudaError with cuSPARSE's status string (caught and recorded by the constructor).
void require(cusparseStatus_t st, const std::string &step) {
    if (st != CUSPARSE_STATUS_SUCCESS) throw CudaError(step + ": " + cusparse_status_string(st));
}

struct DenseLayout {
    const char *name;
    cusparseOrder_t order_a;
    bool a_transposed;  ///< Y described as column-major F x num_dst with opA = T
    cusparseOrder_t order_b;
    bool b_transposed;  ///< X described as row-major num_src x F with opB = T
};

const DenseLayout kLayouts[] = {
    {"A=Y row, B=X col FxN", CUSPARSE_ORDER_ROW, false, CUSPARSE_ORDER_COL, false},
    {"A=Y row, B=X row, opB=T", CUSPARSE_ORDER_ROW, false, CUSPARSE_ORDER_ROW, true},
    {"A=Y col FxM opA=T, B=X col FxN", CUSPARSE_ORDER_COL, true, CUSPARSE_ORDER_COL, false},
};

}  // namespace

CusparseSddmm::CusparseSddmm(const CusparseHandle &handle, const Problem &problem) : handle_(handle), p_(problem) {
    std::string tried;
    for (const DenseLayout &l : kLayouts) {
        try {
            require(cusparseCreateCsr(&c_, p_.num_rows, p_.num_cols, p_.nnz, const_cast<int32_t *>(p_.row_ptr),
                                      const_cast<int32_t *>(p_.col_idx), p_.values, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                    "cusparseCreateCsr");
            // A: op(A) = Y, num_rows x F. Row-major: rows x F, ld F. Column-major F x rows, ld F, opA = T.
            if (l.a_transposed)
                require(cusparseCreateDnMat(&a_, p_.feat, p_.num_rows, p_.feat, const_cast<float *>(p_.y), CUDA_R_32F,
                                            CUSPARSE_ORDER_COL),
                        "cusparseCreateDnMat(Y)");
            else
                require(cusparseCreateDnMat(&a_, p_.num_rows, p_.feat, p_.feat, const_cast<float *>(p_.y), CUDA_R_32F,
                                            l.order_a),
                        "cusparseCreateDnMat(Y)");
            // B: op(B) = X^T, F x num_cols. Column-major F x cols with ld F, or row-major cols x F with opB = T.
            if (l.b_transposed)
                require(cusparseCreateDnMat(&b_, p_.num_cols, p_.feat, p_.feat, const_cast<float *>(p_.x), CUDA_R_32F,
                                            CUSPARSE_ORDER_ROW),
                        "cusparseCreateDnMat(X)");
            else
                require(cusparseCreateDnMat(&b_, p_.feat, p_.num_cols, p_.feat, const_cast<float *>(p_.x), CUDA_R_32F,
                                            l.order_b),
                        "cusparseCreateDnMat(X)");
            op_a_ = l.a_transposed ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
            op_b_ = l.b_transposed ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
            const float alpha = 1.0f, beta = 0.0f;
            size_t bytes = 0;
            require(cusparseSDDMM_bufferSize(handle_.get(), op_a_, op_b_, &alpha, a_, b_, &beta, c_, CUDA_R_32F,
                                             CUSPARSE_SDDMM_ALG_DEFAULT, &bytes),
                    "cusparseSDDMM_bufferSize");
            workspace_bytes_ = bytes;
            if (bytes) workspace_.allocate(bytes);
            require(cusparseSDDMM_preprocess(handle_.get(), op_a_, op_b_, &alpha, a_, b_, &beta, c_, CUDA_R_32F,
                                             CUSPARSE_SDDMM_ALG_DEFAULT, workspace_.data()),
                    "cusparseSDDMM_preprocess");
            // Preprocessing runs on the stream: finish it (and surface asynchronous errors) now.
            GSPARSE_CUDA_CHECK(cudaStreamSynchronize(handle_.stream()));
            layout_ = l.name;
            error_.clear();
            return;
        } catch (const std::exception &e) {
            tried += (tried.empty() ? "" : "; ") + std::string(l.name) + ": " + e.what();
            destroy();
            error_ = "no dense layout accepted (" + tried + ")";
        }
    }
}

CusparseSddmm::~CusparseSddmm() { destroy(); }

void CusparseSddmm::destroy() noexcept {
    if (c_) cusparseDestroySpMat(c_);
    if (a_) cusparseDestroyDnMat(a_);
    if (b_) cusparseDestroyDnMat(b_);
    c_ = nullptr;
    a_ = nullptr;
    b_ = nullptr;
    workspace_.release();
    workspace_bytes_ = 0;
}

void CusparseSddmm::run() {
    if (!error_.empty()) throw CudaError("cuSPARSE SDDMM is not usable: " + error_);
    const float alpha = 1.0f, beta = 0.0f;
    const cusparseStatus_t st = cusparseSDDMM(handle_.get(), op_a_, op_b_, &alpha, a_, b_, &beta, c_, CUDA_R_32F,
                                              CUSPARSE_SDDMM_ALG_DEFAULT, workspace_.data());
    if (st != CUSPARSE_STATUS_SUCCESS) throw CudaError("cusparseSDDMM: " + cusparse_status_string(st));
}

CusparseAlgResult CusparseSddmm::time(EventTimer &timer) {
    CusparseAlgResult r;
    r.name = "SDDMM";
    r.preprocessed = usable();
    r.workspace_bytes = workspace_bytes_;
    if (!usable()) {
        r.error = error_;
        return r;
    }
    try {
        r.timing = timer.time([&] { run(); });
        r.ok = true;
    } catch (const std::exception &e) {
        r.error = e.what();
        error_ = r.error;
    }
    return r;
}

// --- DeviceGather -------------------------------------------------------------------------------------

DeviceGather::DeviceGather(const CusparseHandle &handle, const std::vector<int64_t> &indices)
    : handle_(handle), count_(indices.size()) {
    if (indices.empty()) return;
    max_index_ = *std::max_element(indices.begin(), indices.end());
    indices_ = DeviceBuffer<int64_t>(indices);
    values_.allocate(indices.size());
}

DeviceGather::~DeviceGather() {
    if (vec_) cusparseDestroySpVec(vec_);
}

std::vector<float> DeviceGather::gather(const float *data, int64_t size) {
    std::vector<float> out(count_);
    if (count_ == 0) return out;
    if (max_index_ >= size)
        throw CudaError("DeviceGather: index " + std::to_string(max_index_) + " is outside the array of " +
                        std::to_string(size) + " elements");
    // The sparse vector's logical size must cover the dense one; recreate it when the size changes.
    if (vec_) cusparseDestroySpVec(vec_);
    vec_ = nullptr;
    GSPARSE_CUSPARSE_CHECK(cusparseCreateSpVec(&vec_, size, static_cast<int64_t>(count_), indices_.data(),
                                               values_.data(), CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO,
                                               CUDA_R_32F));
    cusparseDnVecDescr_t dn = nullptr;
    GSPARSE_CUSPARSE_CHECK(cusparseCreateDnVec(&dn, size, const_cast<float *>(data), CUDA_R_32F));
    const cusparseStatus_t st = cusparseGather(handle_.get(), dn, vec_);
    cusparseDestroyDnVec(dn);
    GSPARSE_CUSPARSE_CHECK(st);
    GSPARSE_CUDA_CHECK(cudaStreamSynchronize(handle_.stream()));
    values_.download(out.data(), count_);
    return out;
}

}  // namespace gsparse::bench
