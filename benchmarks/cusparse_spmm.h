// The cuSPARSE baseline of g-SpMM with sum: Z = A X with A the graph's CSR by destination
// (num_dst x num_src, int32 indices, fp32 values: all 1.0f for copy_lhs:sum, the edge weights in
// CSR position order for u_mul_e:sum), X dense row-major num_src x F, Z dense row-major num_dst x F.
//
// "Best cached cuSPARSE": everything that can be done once is done once, outside the timed runs.
// For every algorithm (CUSPARSE_SPMM_ALG_DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3) the constructor
// creates its own descriptor set (cusparseCreateCsr, two cusparseCreateDnMat with
// CUSPARSE_ORDER_ROW), queries cusparseSpMM_bufferSize and allocates that workspace, and for the
// algorithms that profit from it (CSR_ALG1, CSR_ALG3) runs cusparseSpMM_preprocess. A timed run is
// one cusparseSpMM call. Separate descriptors keep one algorithm's preprocessing from affecting
// another's. An algorithm that rejects the configuration (some reject certain F or layouts) is
// recorded with cuSPARSE's error string and skipped; it never aborts the run.
#pragma once

#include <cusparse.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "event_timer.h"
#include "graph/formats.h"

namespace gsparse::bench {

/// Owns a cuSPARSE handle bound to a stream.
class CusparseHandle {
public:
    explicit CusparseHandle(cudaStream_t stream);
    ~CusparseHandle();
    CusparseHandle(const CusparseHandle &) = delete;
    CusparseHandle &operator=(const CusparseHandle &) = delete;
    cusparseHandle_t get() const { return handle_; }
    cudaStream_t stream() const { return stream_; }
    /// "12.6.3" from cusparseGetProperty.
    static std::string version_string();

private:
    cusparseHandle_t handle_ = nullptr;
    cudaStream_t stream_ = nullptr;
};

/// The index arrays of a CSR on the device (uploaded once per graph).
struct DeviceCsrPattern {
    int64_t num_rows = 0;
    int64_t num_cols = 0;
    int64_t nnz = 0;
    DeviceBuffer<int32_t> row_ptr;
    DeviceBuffer<int32_t> col_idx;

    static DeviceCsrPattern upload(const CSR &csr);
    size_t bytes() const { return row_ptr.bytes() + col_idx.bytes(); }
};

struct CusparseAlgorithm {
    cusparseSpMMAlg_t alg;
    std::string name;  ///< "ALG_DEFAULT", "CSR_ALG1", "CSR_ALG2", "CSR_ALG3"
    bool preprocess;   ///< run cusparseSpMM_preprocess once after allocating the workspace
};

/// ALG_DEFAULT, CSR_ALG1 (preprocessed), CSR_ALG2, CSR_ALG3 (preprocessed).
std::vector<CusparseAlgorithm> default_cusparse_algorithms();

/// Time (or failure) of one algorithm.
struct CusparseAlgResult {
    std::string name;
    bool ok = false;
    std::string error;           ///< why the algorithm did not run (setup or run failure); empty when ok
    bool preprocessed = false;
    size_t workspace_bytes = 0;
    TimingResult timing;         ///< valid when ok
};

/// The fastest (by median) of the algorithms that ran; null when none did.
const CusparseAlgResult *best_of(const std::vector<CusparseAlgResult> &results);

class CusparseSpmm {
public:
    /// Device pointers of one problem; none is owned. values holds nnz floats in CSR position order.
    struct Problem {
        int64_t num_rows = 0;  ///< destinations (rows of A and Z)
        int64_t num_cols = 0;  ///< sources (columns of A, rows of X)
        int64_t nnz = 0;
        const int32_t *row_ptr = nullptr;
        const int32_t *col_idx = nullptr;
        const float *values = nullptr;
        int64_t feat = 0;      ///< F: columns of X and Z
        const float *x = nullptr;
        float *z = nullptr;
    };

    /// Sets up every algorithm (descriptors, workspace, preprocessing). Failures of one algorithm are
    /// recorded (setup_error) and do not throw; a failure to synchronize the stream does.
    CusparseSpmm(const CusparseHandle &handle, const Problem &problem,
                 std::vector<CusparseAlgorithm> algorithms = default_cusparse_algorithms());
    ~CusparseSpmm();
    CusparseSpmm(const CusparseSpmm &) = delete;
    CusparseSpmm &operator=(const CusparseSpmm &) = delete;

    size_t num_algorithms() const { return algs_.size(); }
    const CusparseAlgorithm &algorithm(size_t i) const { return algs_.at(i).spec; }
    /// Whether algorithm i was set up (and has not failed since).
    bool usable(size_t i) const { return algs_.at(i).error.empty(); }
    const std::string &error(size_t i) const { return algs_.at(i).error; }
    /// Index of the first usable algorithm, or -1.
    int first_usable() const;

    /// Enqueues one Z = A X with algorithm i on the handle's stream; throws CudaError on failure.
    void run(size_t i);

    /// Times every usable algorithm with timer (which must use the handle's stream); an algorithm
    /// whose run fails is recorded as failed and marked unusable.
    std::vector<CusparseAlgResult> time_all(EventTimer &timer);

    /// Runs algorithm i once into Z (after zeroing it), synchronizes and returns Z (num_rows x F).
    std::vector<float> output(size_t i);

private:
    struct Alg {
        CusparseAlgorithm spec;
        cusparseSpMatDescr_t a = nullptr;
        cusparseDnMatDescr_t b = nullptr;
        cusparseDnMatDescr_t c = nullptr;
        DeviceBuffer<unsigned char> workspace;
        size_t workspace_bytes = 0;
        bool preprocessed = false;
        std::string error;
    };
    void setup(Alg &alg);
    static void destroy(Alg &alg) noexcept;

    const CusparseHandle &handle_;
    Problem p_;
    std::vector<Alg> algs_;
};

}  // namespace gsparse::bench
