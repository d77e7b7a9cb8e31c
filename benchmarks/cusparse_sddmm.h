// The cuSPARSE baseline of g-SDDMM dot, and a cuSPARSE-based gather of sampled output elements.
//
// cusparseSDDMM computes C = alpha (op(A) op(B)) o spy(C) + beta C with C sparse m x n, op(A) dense
// m x k and op(B) dense k x n. gsparse's u_dot_v gives edge e = (u -> v) the value X[u] . Y[v]. With
// C the graph's CSR by destination (row v, column u for every edge u -> v; m = num_dst,
// n = num_src), C[v][u] = sum_f Y[v][f] X[u][f], so op(A) = Y (num_dst x F) and op(B) = X^T
// (F x num_src), alpha = 1, beta = 0. Y is row-major num_dst x F with leading dimension F. X is
// row-major num_src x F, which is the same memory as a column-major F x num_src matrix with
// leading dimension F, so B needs no copy: it is described either that way (opB = non-transpose)
// or as row-major num_src x F with opB = transpose. The constructor tries, in order,
//   "A=Y row, B=X col FxN"   A row-major, B column-major F x num_src, opA = opB = N
//   "A=Y row, B=X row, opB=T"
//   "A=Y col FxM opA=T, B=X col FxN"   both column-major (Y seen as F x num_dst, opA = T)
// and keeps the first that cusparseSDDMM_bufferSize and cusparseSDDMM_preprocess accept (recorded
// as layout()). C's values come out in CSR position order: value p belongs to edge csr.edge_id(p).
//
// "Cached": the descriptors are created once, cusparseSDDMM_bufferSize is queried once, the
// workspace is allocated once and cusparseSDDMM_preprocess runs once; a timed run is one
// cusparseSDDMM call with those (cuSPARSE allows preprocessed calls to change alpha, beta, the
// dense matrices and C's values, so reusing the descriptors is within the API's contract).
#pragma once

#include <cusparse.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cusparse_spmm.h"
#include "device_buffer.h"
#include "event_timer.h"

namespace gsparse::bench {

class CusparseSddmm {
public:
    /// Device pointers of one problem; none is owned.
    struct Problem {
        int64_t num_rows = 0;  ///< destinations (rows of C, rows of Y)
        int64_t num_cols = 0;  ///< sources (columns of C, rows of X)
        int64_t nnz = 0;
        const int32_t *row_ptr = nullptr;
        const int32_t *col_idx = nullptr;
        float *values = nullptr;  ///< nnz outputs in CSR position order
        int64_t feat = 0;         ///< F
        const float *x = nullptr; ///< num_cols x F row-major (source features)
        const float *y = nullptr; ///< num_rows x F row-major (destination features)
    };

    /// Sets up the descriptors, the workspace and the preprocessing. A failure is recorded
    /// (error()) and does not throw.
    CusparseSddmm(const CusparseHandle &handle, const Problem &problem);
    ~CusparseSddmm();
    CusparseSddmm(const CusparseSddmm &) = delete;
    CusparseSddmm &operator=(const CusparseSddmm &) = delete;

    bool usable() const { return error_.empty(); }
    const std::string &error() const { return error_; }
    const std::string &layout() const { return layout_; }
    size_t workspace_bytes() const { return workspace_bytes_; }

    /// Enqueues one cusparseSDDMM on the handle's stream; throws CudaError on failure.
    void run();
    /// Times run() with timer (on the handle's stream); a failure is recorded, marks the baseline
    /// unusable and is returned with ok = false. The name is "SDDMM".
    CusparseAlgResult time(EventTimer &timer);

private:
    void destroy() noexcept;

    const CusparseHandle &handle_;
    Problem p_;
    cusparseSpMatDescr_t c_ = nullptr;
    cusparseDnMatDescr_t a_ = nullptr;
    cusparseDnMatDescr_t b_ = nullptr;
    cusparseOperation_t op_a_ = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseOperation_t op_b_ = CUSPARSE_OPERATION_NON_TRANSPOSE;
    DeviceBuffer<unsigned char> workspace_;
    size_t workspace_bytes_ = 0;
    std::string layout_;
    std::string error_;
};

/// Reads chosen elements of a device float array with cusparseGather: the indices are uploaded
/// once, each gather() is one cusparseGather into a small device buffer and one download, so
/// checking a sample of a large output costs O(sample), not O(output).
class DeviceGather {
public:
    DeviceGather(const CusparseHandle &handle, const std::vector<int64_t> &indices);
    ~DeviceGather();
    DeviceGather(const DeviceGather &) = delete;
    DeviceGather &operator=(const DeviceGather &) = delete;

    /// values[i] = data[indices[i]]; data holds size elements (every index must be below size).
    /// Synchronizes the handle's stream.
    std::vector<float> gather(const float *data, int64_t size);
    size_t size() const { return count_; }

private:
    const CusparseHandle &handle_;
    size_t count_ = 0;
    int64_t max_index_ = -1;
    DeviceBuffer<int64_t> indices_;
    DeviceBuffer<float> values_;
    cusparseSpVecDescr_t vec_ = nullptr;
};

}  // namespace gsparse::bench
