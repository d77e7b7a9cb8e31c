// Helpers of the g-SpMM benchmark: deterministic inputs, the byte model behind the bandwidth
// numbers, output comparison, a CPU reference for sampled rows, device facts and dates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "event_timer.h"
#include "graph/graph.h"
#include "ops/op_spec.h"

namespace gsparse::bench {

// --- Inputs ------------------------------------------------------------------------------------

/// A deterministic pseudo-random value in [0, 1) for element index of a stream seeded by seed.
/// Feature values are positive so that sums do not cancel and relative errors stay meaningful.
float hashed_unit(uint64_t seed, uint64_t index);

/// X[u][f] of the benchmark's node features (num_src x F, row-major): hashed_unit(seed, u * F + f).
inline float feature_value(uint64_t seed, int64_t feat, int64_t u, int64_t f) {
    return hashed_unit(seed, static_cast<uint64_t>(u) * static_cast<uint64_t>(feat) + static_cast<uint64_t>(f));
}

/// Fills the device buffer (rows x feat floats) with feature_value, generating on the host in
/// chunks (in parallel) so that no host copy of the whole matrix is kept.
void upload_features(DeviceBuffer<float> &buf, int64_t rows, int64_t feat, uint64_t seed);

/// Per-edge weights by edge id: the graph's own values when it has them, else 0.5 + hashed_unit
/// (in [0.5, 1.5), never 0, so div is defined).
std::vector<float> edge_weights(const Graph &g, uint64_t seed);

/// values[edge_id(pos)] for every CSR position (the order cuSPARSE reads values in).
std::vector<float> values_by_position(const CSR &csr, const std::vector<float> &by_edge_id);

// --- Operators the harness runs ------------------------------------------------------------------

/// "copy_lhs:sum" -> SpmmSpec. The rhs (when used) is the per-edge weight (num_edges x 1, broadcast
/// over F), so copy_rhs and dot are rejected with a gsparse::Error naming the supported forms.
SpmmSpec parse_bench_op(const std::string &text);
/// Inverse of parse_bench_op: "copy_lhs:sum", "mul:sum", ...
std::string bench_op_string(const SpmmSpec &spec);

// --- Bytes ---------------------------------------------------------------------------------------

/// The byte model of one case (the same for every competitor of the case). For g-SpMM:
struct CaseBytes {
    double index = 0;       ///< row_ptr + col_idx (+ one float per edge when the op reads edge weights)
    double compulsory = 0;  ///< index + X once + Z once (+ arg_u and arg_e for max/min)
    double gathered = 0;    ///< index + nnz * F * 4 (every gathered feature element, as if from DRAM)
};
using SpmmBytes = CaseBytes;

SpmmBytes spmm_bytes(int64_t num_dst, int64_t num_src, int64_t nnz, int64_t feat, const SpmmSpec &spec);

// --- Checks --------------------------------------------------------------------------------------

struct Comparison {
    double max_rel_err = 0;    ///< max |a - b| / max(|b|, floor) with floor = 1e-6 * max|b| (and > 0)
    double max_abs_err = 0;
    int64_t worst_index = -1;  ///< element of the largest relative error
    int64_t mismatched_nonfinite = 0;  ///< elements where exactly one side is NaN/Inf, or they differ
    int64_t elements = 0;
    bool ok(double tolerance) const { return mismatched_nonfinite == 0 && max_rel_err <= tolerance; }
};

/// Compares a (the output under test) with b (the reference), element by element.
Comparison compare_outputs(const float *a, const double *b, size_t n);
Comparison compare_outputs(const std::vector<float> &a, const std::vector<float> &b);

/// Relative-error tolerance of a reduction: 1e-4 for sum/mean (fp32 accumulation in a different
/// order than the reference), 1e-6 for max/min (one fp32 operation per message).
double tolerance_for(const SpmmSpec &spec);

/// A CPU reference of the benchmark's g-SpMM (features from feature_value, rhs = per-edge weights)
/// on a deterministic sample of destination rows: the longest row, the first and last rows, an
/// empty row when there is one, and pseudo-random rows up to max_rows. Sums accumulate in double.
class SampledReference {
public:
    SampledReference(const Graph &g, const SpmmSpec &spec, int64_t feat, uint64_t feature_seed,
                     const std::vector<float> &weights_by_edge_id, int64_t max_rows, uint64_t sample_seed);

    const std::vector<int64_t> &rows() const { return rows_; }
    /// The reference values, rows().size() x F, row-major.
    const std::vector<double> &values() const { return ref_; }

    /// Downloads the sampled rows of out (num_dst x F floats on the device) and compares them.
    Comparison check(const float *device_out) const;
    /// max/min: number of sampled output elements whose arg_u / arg_e (int32 on the device) do not
    /// name an edge (arg_u -> v, id arg_e) of row v producing out's value, or are not -1 for empty
    /// rows. Returns the count and, through first_problem, a description of the first one.
    int64_t check_args(const float *device_out, const int32_t *device_arg_u, const int32_t *device_arg_e,
                       std::string *first_problem) const;

private:
    float message(int64_t u, int64_t f, int64_t e) const;
    std::vector<float> download_rows(const float *device_out) const;

    const Graph &g_;
    SpmmSpec spec_;
    int64_t feat_;
    uint64_t seed_;
    const std::vector<float> &weights_;
    std::vector<int64_t> rows_;
    std::vector<double> ref_;  ///< rows_.size() x F
};

/// After an exception: whether the CUDA context still works (a sticky error such as an illegal
/// address makes every later call fail). Clears a non-sticky last error.
bool cuda_context_healthy();

// --- Device and dates ----------------------------------------------------------------------------

struct DeviceInfo {
    int index = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int multiprocessors = 0;
    size_t l2_bytes = 0;
    size_t global_mem_bytes = 0;
    int driver_version = 0;   ///< cudaDriverGetVersion (e.g. 13000)
    int runtime_version = 0;  ///< cudaRuntimeGetVersion
    std::string cusparse_version;
};

DeviceInfo query_device();
/// "13.0" from 13000.
std::string cuda_version_string(int version);

/// UTC "YYYY-MM-DD" and "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_date();
std::string utc_timestamp();

/// Device-to-device copy bandwidth: times cudaMemcpyAsync of bytes (default 1 GiB) with timer and
/// returns the median time; bandwidth = 2 * bytes / time counts bytes read plus bytes written.
struct CopyBandwidth {
    size_t bytes = 0;
    TimingResult timing;
    double read_write_bytes_per_s = 0;
};
CopyBandwidth measure_copy_bandwidth(EventTimer &timer, size_t bytes = size_t(1) << 30);

}  // namespace gsparse::bench
