#include "bench_util.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "cuda_check.h"

namespace gsparse::bench {

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// Runs fn(begin, end) over [0, n) split across the hardware threads.
template <typename Fn>
void parallel_ranges(size_t n, Fn fn) {
    const size_t threads = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 32));
    if (n < (size_t(1) << 16) || threads == 1) {
        fn(size_t(0), n);
        return;
    }
    std::vector<std::thread> pool;
    const size_t step = (n + threads - 1) / threads;
    for (size_t b = 0; b < n; b += step) pool.emplace_back(fn, b, std::min(n, b + step));
    for (auto &t : pool) t.join();
}

}  // namespace

float hashed_unit(uint64_t seed, uint64_t index) {
    const uint64_t h = splitmix64(splitmix64(seed) ^ index);
    return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // 24 random bits: exact in fp32
}

void upload_features(DeviceBuffer<float> &buf, int64_t rows, int64_t feat, uint64_t seed) {
    const size_t total = static_cast<size_t>(rows) * static_cast<size_t>(feat);
    if (buf.size() < total) throw gsparse::Error("upload_features: buffer too small");
    const size_t chunk = size_t(1) << 24;  // 64 MiB of floats per transfer
    std::vector<float> host(std::min(total, chunk));
    for (size_t begin = 0; begin < total; begin += chunk) {
        const size_t n = std::min(chunk, total - begin);
        parallel_ranges(n, [&](size_t b, size_t e) {
            for (size_t i = b; i < e; ++i) host[i] = hashed_unit(seed, begin + i);
        });
        buf.upload(host.data(), n, begin);
    }
}

std::vector<float> edge_weights(const Graph &g, uint64_t seed) {
    if (g.has_values()) return g.values();
    std::vector<float> w(static_cast<size_t>(g.num_edges()));
    parallel_ranges(w.size(), [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) w[i] = 0.5f + hashed_unit(seed, i);
    });
    return w;
}

std::vector<float> values_by_position(const CSR &csr, const std::vector<float> &by_edge_id) {
    if (static_cast<int64_t>(by_edge_id.size()) != csr.nnz())
        throw gsparse::Error("values_by_position: " + std::to_string(by_edge_id.size()) + " values for " +
                             std::to_string(csr.nnz()) + " edges");
    if (csr.identity_edge_ids()) return by_edge_id;
    std::vector<float> v(by_edge_id.size());
    for (int64_t p = 0; p < csr.nnz(); ++p) v[static_cast<size_t>(p)] = by_edge_id[static_cast<size_t>(csr.edge_id(p))];
    return v;
}

SpmmSpec parse_bench_op(const std::string &text) {
    const size_t colon = text.find(':');
    if (colon == std::string::npos)
        throw gsparse::Error("op '" + text + "' is not of the form BINARY:REDUCE (e.g. copy_lhs:sum, mul:sum)");
    SpmmSpec spec;
    spec.op = parse_binary_op(text.substr(0, colon));
    spec.reduce = parse_reduce_op(text.substr(colon + 1));
    if (spec.op == BinaryOp::Dot || spec.op == BinaryOp::CopyRhs)
        throw gsparse::Error("op '" + text +
                             "' is not benchmarked: the harness supports copy_lhs, add, sub, mul and div "
                             "(rhs = one weight per edge) with sum, mean, max or min");
    return spec;
}

std::string bench_op_string(const SpmmSpec &spec) {
    return std::string(binary_op_name(spec.op)) + ":" + reduce_op_name(spec.reduce);
}

SpmmBytes spmm_bytes(int64_t num_dst, int64_t num_src, int64_t nnz, int64_t feat, const SpmmSpec &spec) {
    SpmmBytes b;
    const double f = static_cast<double>(feat);
    b.index = 4.0 * static_cast<double>(num_dst + 1) + 4.0 * static_cast<double>(nnz);
    if (uses_rhs(spec.op)) b.index += 4.0 * static_cast<double>(nnz);
    const double outputs = has_arg_outputs(spec.reduce) ? 3.0 : 1.0;  // out, arg_u, arg_e (4 bytes each)
    b.compulsory = b.index + 4.0 * static_cast<double>(num_src) * f + outputs * 4.0 * static_cast<double>(num_dst) * f;
    b.gathered = b.index + 4.0 * static_cast<double>(nnz) * f;
    return b;
}

// --- Checks --------------------------------------------------------------------------------------

namespace {

template <typename A, typename B>
Comparison compare_impl(const A *a, const B *b, size_t n) {
    Comparison c;
    c.elements = static_cast<int64_t>(n);
    double max_ref = 0;
    for (size_t i = 0; i < n; ++i)
        if (std::isfinite(static_cast<double>(b[i]))) max_ref = std::max(max_ref, std::fabs(static_cast<double>(b[i])));
    const double floor = std::max(1e-6 * max_ref, std::numeric_limits<double>::min());
    for (size_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
        if (!std::isfinite(x) || !std::isfinite(y)) {
            const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
            if (!same) ++c.mismatched_nonfinite;
            continue;
        }
        const double abs_err = std::fabs(x - y);
        const double rel = abs_err / std::max(std::fabs(y), floor);
        c.max_abs_err = std::max(c.max_abs_err, abs_err);
        if (rel > c.max_rel_err) {
            c.max_rel_err = rel;
            c.worst_index = static_cast<int64_t>(i);
        }
    }
    return c;
}

}  // namespace

Comparison compare_outputs(const float *a, const double *b, size_t n) { return compare_impl(a, b, n); }

Comparison compare_outputs(const std::vector<float> &a, const std::vector<float> &b) {
    if (a.size() != b.size())
        throw gsparse::Error("compare_outputs: sizes differ (" + std::to_string(a.size()) + " vs " +
                             std::to_string(b.size()) + ")");
    return compare_impl(a.data(), b.data(), a.size());
}

double tolerance_for(const SpmmSpec &spec) {
    return (spec.reduce == ReduceOp::Sum || spec.reduce == ReduceOp::Mean) ? 1e-4 : 1e-6;
}

SampledReference::SampledReference(const Graph &g, const SpmmSpec &spec, int64_t feat, uint64_t feature_seed,
                                   const std::vector<float> &weights_by_edge_id, int64_t max_rows,
                                   uint64_t sample_seed)
    : g_(g), spec_(spec), feat_(feat), seed_(feature_seed), weights_(weights_by_edge_id) {
    const CSR &csr = g.csr();
    const int64_t n = csr.num_rows;
    if (n == 0 || max_rows <= 0) return;
    std::vector<int64_t> rows;
    int64_t longest = 0, empty = -1;
    for (int64_t v = 0; v < n; ++v) {
        if (csr.row_length(v) > csr.row_length(longest)) longest = v;
        if (empty < 0 && csr.row_length(v) == 0) empty = v;
    }
    rows.push_back(longest);
    rows.push_back(0);
    rows.push_back(n - 1);
    if (empty >= 0) rows.push_back(empty);
    for (uint64_t k = 0; static_cast<int64_t>(rows.size()) < std::min<int64_t>(max_rows, n) && k < 16 * static_cast<uint64_t>(max_rows); ++k)
        rows.push_back(static_cast<int64_t>(splitmix64(sample_seed + k) % static_cast<uint64_t>(n)));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    rows_ = std::move(rows);

    ref_.assign(rows_.size() * static_cast<size_t>(feat_), 0.0);
    parallel_ranges(rows_.size(), [&](size_t rb, size_t re) {
        for (size_t r = rb; r < re; ++r) {
            const int64_t v = rows_[r];
            const int64_t begin = csr.row_ptr[v], end = csr.row_ptr[v + 1];
            double *out = &ref_[r * static_cast<size_t>(feat_)];
            if (begin == end) continue;  // no in-edges: 0
            for (int64_t f = 0; f < feat_; ++f) {
                double acc;
                if (spec_.reduce == ReduceOp::Sum || spec_.reduce == ReduceOp::Mean) {
                    acc = 0;
                    for (int64_t p = begin; p < end; ++p) acc += message(csr.col_idx[p], f, csr.edge_id(p));
                    if (spec_.reduce == ReduceOp::Mean) acc /= static_cast<double>(end - begin);
                } else {
                    float m = message(csr.col_idx[begin], f, csr.edge_id(begin));
                    for (int64_t p = begin + 1; p < end; ++p) {
                        const float x = message(csr.col_idx[p], f, csr.edge_id(p));
                        m = spec_.reduce == ReduceOp::Max ? std::max(m, x) : std::min(m, x);
                    }
                    acc = m;
                }
                out[f] = acc;
            }
        }
    });
}

float SampledReference::message(int64_t u, int64_t f, int64_t e) const {
    const float x = feature_value(seed_, feat_, u, f);
    const float w = uses_rhs(spec_.op) ? weights_[static_cast<size_t>(e)] : 0.0f;
    switch (spec_.op) {
        case BinaryOp::Add: return x + w;
        case BinaryOp::Sub: return x - w;
        case BinaryOp::Mul: return x * w;
        case BinaryOp::Div: return x / w;
        case BinaryOp::CopyRhs: return w;
        default: return x;
    }
}

std::vector<float> SampledReference::download_rows(const float *device_out) const {
    std::vector<float> got(rows_.size() * static_cast<size_t>(feat_));
    for (size_t r = 0; r < rows_.size(); ++r)
        GSPARSE_CUDA_CHECK(cudaMemcpy(&got[r * static_cast<size_t>(feat_)], device_out + rows_[r] * feat_,
                                      static_cast<size_t>(feat_) * sizeof(float), cudaMemcpyDeviceToHost));
    return got;
}

Comparison SampledReference::check(const float *device_out) const {
    const std::vector<float> got = download_rows(device_out);
    return compare_outputs(got.data(), ref_.data(), got.size());
}

int64_t SampledReference::check_args(const float *device_out, const int32_t *device_arg_u,
                                     const int32_t *device_arg_e, std::string *first_problem) const {
    const size_t fs = static_cast<size_t>(feat_);
    const std::vector<float> got = download_rows(device_out);
    std::vector<int32_t> au(rows_.size() * fs), ae(rows_.size() * fs);
    for (size_t r = 0; r < rows_.size(); ++r) {
        GSPARSE_CUDA_CHECK(cudaMemcpy(&au[r * fs], device_arg_u + rows_[r] * feat_, fs * sizeof(int32_t),
                                      cudaMemcpyDeviceToHost));
        GSPARSE_CUDA_CHECK(cudaMemcpy(&ae[r * fs], device_arg_e + rows_[r] * feat_, fs * sizeof(int32_t),
                                      cudaMemcpyDeviceToHost));
    }
    const CSR &csr = g_.csr();
    int64_t bad = 0;
    auto report = [&](int64_t v, int64_t f, const std::string &what) {
        if (bad++ == 0 && first_problem) {
            std::ostringstream os;
            os << "row " << v << ", feature " << f << ": " << what;
            *first_problem = os.str();
        }
    };
    for (size_t r = 0; r < rows_.size(); ++r) {
        const int64_t v = rows_[r];
        const int64_t begin = csr.row_ptr[v], end = csr.row_ptr[v + 1];
        std::unordered_map<int64_t, int64_t> source_of_edge;  // edge id -> source, for row v
        for (int64_t p = begin; p < end; ++p) source_of_edge[csr.edge_id(p)] = csr.col_idx[p];
        for (int64_t f = 0; f < feat_; ++f) {
            const int32_t u = au[r * fs + f], e = ae[r * fs + f];
            if (begin == end) {
                if (u != -1 || e != -1) report(v, f, "row without in-edges must have arg_u = arg_e = -1, got " +
                                                         std::to_string(u) + ", " + std::to_string(e));
                continue;
            }
            auto it = source_of_edge.find(e);
            if (it == source_of_edge.end() || it->second != u) {
                report(v, f, "(arg_u, arg_e) = (" + std::to_string(u) + ", " + std::to_string(e) +
                                 ") is not an in-edge of the row");
                continue;
            }
            const float m = message(u, f, e);
            if (m != got[r * fs + f])
                report(v, f, "the message of the arg edge is " + std::to_string(m) + " but the output is " +
                                 std::to_string(got[r * fs + f]));
        }
    }
    return bad;
}

bool cuda_context_healthy() {
    cudaError_t st = cudaDeviceSynchronize();
    if (st == cudaSuccess) return true;
    (void)cudaGetLastError();  // clears a non-sticky error
    st = cudaDeviceSynchronize();
    return st == cudaSuccess && cudaPeekAtLastError() == cudaSuccess;
}

// --- Device and dates ----------------------------------------------------------------------------

DeviceInfo query_device() {
    DeviceInfo d;
    GSPARSE_CUDA_CHECK(cudaGetDevice(&d.index));
    cudaDeviceProp prop{};
    GSPARSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, d.index));
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.l2_bytes = static_cast<size_t>(std::max(prop.l2CacheSize, 0));
    d.global_mem_bytes = prop.totalGlobalMem;
    GSPARSE_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
    GSPARSE_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
    return d;
}

std::string cuda_version_string(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

namespace {
std::string utc_format(const char *fmt) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    const size_t n = std::strftime(buf, sizeof buf, fmt, &tm);
    return std::string(buf, n);
}
}  // namespace

std::string utc_date() { return utc_format("%Y-%m-%d"); }
std::string utc_timestamp() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }

CopyBandwidth measure_copy_bandwidth(EventTimer &timer, size_t bytes) {
    CopyBandwidth r;
    r.bytes = bytes;
    DeviceBuffer<unsigned char> src(bytes), dst(bytes);
    GSPARSE_CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, timer.stream()));
    r.timing = timer.time([&] {
        GSPARSE_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, timer.stream()));
    });
    if (r.timing.median_ms > 0) r.read_write_bytes_per_s = 2.0 * static_cast<double>(bytes) / (r.timing.median_ms * 1e-3);
    return r;
}

}  // namespace gsparse::bench
