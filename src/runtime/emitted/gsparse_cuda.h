// gsparse_cuda.h: support code of g-SpMM and g-SDDMM kernels emitted by gsparse for the CUDA target. gsparse
// writes this file next to the kernels it emits (its source is src/runtime/emitted/gsparse_cuda.h).
//
//   gsparse_kernels::CudaLaunch launch{ctx, stream};     // the application's CUcontext and CUstream
//   gsparse_kernels::CudaGraph graph;                     // a CSR graph on the device, prepared once
//   int rc = graph.prepare(launch, num_dst, num_src, nnz, row_ptr, col_idx);   // host arrays
//   rc = gsparse_kernels::my_kernel(launch, graph, x, w, z);                    // device pointers
//   if (rc) fprintf(stderr, "%s\n", launch.error.c_str());
//   gsparse_kernels::CudaCoo coo;                         // g-SDDMM: a COO graph in edge-id order
//   rc = coo.prepare(launch, num_edges, num_src, num_dst, src_idx, dst_idx);   // host arrays
//   rc = gsparse_kernels::my_sddmm(launch, coo, h, h, scores);                  // device pointers
//
// Kernels run in the CUcontext and on the CUstream of the CudaLaunch they are given: the Halide
// runtime's CUDA context, stream and error hooks are replaced once per process (the first time a
// graph is prepared) by handlers that read them from the CudaLaunch passed as Halide's user_context
// and record errors in CudaLaunch::error instead of aborting. Calls with a null user_context (other
// Halide code in the process) still go to Halide's default handlers.
//
// Feature tensors are used in place (device pointers wrapped with halide_cuda_wrap_device_ptr).
// The graph's index arrays are validated on the host and copied once by CudaGraph::prepare; each
// kernel schedule's row layout (row offsets padded to its row tile, row segments, or the rows in
// balanced or locality order) is built from them the first time the kernel runs on the graph (copies that
// wait for the stream: run a kernel once before capturing its stream into a CUDA graph) and kept
// with the graph.
#pragma once

#include <HalideBuffer.h>
#include <HalideRuntimeCuda.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "gsparse_locality_order.h"

namespace gsparse_kernels {

#ifndef GSPARSE_KERNEL_ERROR_CODES
#define GSPARSE_KERNEL_ERROR_CODES
/// Return codes of emitted kernels (Halide's own error codes are other negative values).
enum : int { kOk = 0, kNullPointer = -10001, kBadShape = -10002, kBadGraph = -10003, kBadContext = -10004,
             kBadAlignment = -10005 };
#endif

/// Where a kernel runs: a CUcontext (required) and a CUstream of it (null: the context's default
/// stream), as void * so that this header needs no CUDA headers. error holds the reason of the last
/// failed call (empty after a success).
struct CudaLaunch {
    void *context = nullptr;
    void *stream = nullptr;
    std::string error;
};

namespace detail {

/// Records what went wrong in launch.error and returns code.
inline int fail(CudaLaunch &launch, int code, const std::string &message) {
    launch.error = message;
    return code;
}

struct PreviousHooks {
    halide_cuda_acquire_context_t acquire = nullptr;
    halide_cuda_release_context_t release = nullptr;
    halide_cuda_get_stream_t get_stream = nullptr;
    halide_error_handler_t error = nullptr;
};

inline PreviousHooks &previous_hooks() {
    static PreviousHooks hooks;
    return hooks;
}

inline int acquire_context(void *user_context, void **cuda_context, bool create) {
    if (!user_context) return previous_hooks().acquire(user_context, cuda_context, create);
    *cuda_context = static_cast<CudaLaunch *>(user_context)->context;
    return *cuda_context ? 0 : halide_error_code_device_interface_no_device;
}

inline int release_context(void *user_context) {
    return user_context ? 0 : previous_hooks().release(user_context);
}

inline int get_stream(void *user_context, void *cuda_context, void **stream) {
    if (!user_context) return previous_hooks().get_stream(user_context, cuda_context, stream);
    *stream = static_cast<CudaLaunch *>(user_context)->stream;
    return 0;
}

inline void record_error(void *user_context, const char *message) {
    if (!user_context) {
        previous_hooks().error(user_context, message);
        return;
    }
    std::string &error = static_cast<CudaLaunch *>(user_context)->error;
    if (!error.empty()) error += "; ";
    error += message;
    while (!error.empty() && (error.back() == '\n' || error.back() == ' ')) error.pop_back();
}

/// Replaces the Halide runtime's CUDA context, stream and error hooks (once per process).
inline void install_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        PreviousHooks &p = previous_hooks();
        p.acquire = halide_set_cuda_acquire_context(acquire_context);
        p.release = halide_set_cuda_release_context(release_context);
        p.get_stream = halide_set_cuda_get_stream(get_stream);
        p.error = halide_set_error_handler(record_error);
    });
}

/// A device-only int32 array (host field null) allocated in launch's context.
using DeviceArray = Halide::Runtime::Buffer<int32_t>;

/// Copies n values to a new device allocation in launch.context. An empty array becomes one zero,
/// so that index buffers of graphs without edges still bind valid memory.
inline int upload(CudaLaunch &launch, const int32_t *data, size_t n, DeviceArray &out, const char *what) {
    static const int32_t zero = 0;
    if (n == 0) data = &zero, n = 1;
    DeviceArray b(const_cast<int32_t *>(data), static_cast<int>(n));
    b.set_host_dirty();
    int rc = b.copy_to_device(halide_cuda_device_interface(), &launch);
    // The copy may be queued on launch.stream: wait for it, since the host memory is the caller's.
    if (!rc) rc = halide_device_sync(&launch, b.raw_buffer());
    if (rc) {
        b.device_free(&launch);
        return fail(launch, rc, std::string("copying ") + what + " to the GPU failed: " + launch.error);
    }
    // The host memory is the caller's: from here on the buffer only names the device copy.
    b.raw_buffer()->host = nullptr;
    b.set_host_dirty(false);
    out = std::move(b);
    return kOk;
}

/// Frees a device array in the context it was allocated in.
inline void free_array(void *context, DeviceArray &a) {
    if (!a.raw_buffer()->device) return;
    CudaLaunch owner{context, nullptr, {}};
    a.device_free(&owner);
    a = DeviceArray();
}

}  // namespace detail

/// A CSR graph (rows = destination nodes) on the device of one CUDA context, shared by every
/// emitted kernel that runs on it. Not copyable; frees its device memory when destroyed (the
/// context must still exist then) or on release().
class CudaGraph {
public:
    /// The device arrays of one kernel schedule's row layout (used by the kernels).
    /// The order blocks take rows in: by id, balancedIdx (longest first), or the locality order
    /// (gsparse_locality_order.h: rows grouped by the sources they read, longest first in a group).
    enum RowOrder : int { kRowIdOrder = 0, kBalancedOrder = 1, kLocalityOrder = 2 };
    struct Rows {
        int row_tile = 1, segment_len = 0;
        int order = kRowIdOrder;
        detail::DeviceArray row_ptr;    ///< row offsets padded to the row tile, or segment offsets
        detail::DeviceArray row_order;  ///< the rows in `order` (kBalancedOrder, kLocalityOrder)
        detail::DeviceArray row_segs;   ///< first segment of each row (segment_len > 0)
        int32_t max_len = 0, num_segs = 1, max_segments = 0;
    };

    CudaGraph() = default;
    CudaGraph(const CudaGraph &) = delete;
    CudaGraph &operator=(const CudaGraph &) = delete;
    ~CudaGraph() { release(); }

    /// Checks the host CSR arrays (row_ptr from 0 to nnz and non-decreasing, every index in range)
    /// and copies col_idx (and edge_ids unless null, which means the CSR positions) to the device of
    /// launch.context. Returns kOk, kNullPointer, kBadShape, kBadGraph (with launch.error saying
    /// why; no CUDA call is made then) or a Halide error code. The host arrays can be reused after
    /// it returns.
    int prepare(CudaLaunch &launch, int32_t num_dst, int32_t num_src, int32_t nnz, const int32_t *row_ptr,
                const int32_t *col_idx, const int32_t *edge_ids = nullptr) {
        launch.error.clear();
        if (!launch.context) return detail::fail(launch, kNullPointer, "launch.context is null (pass the application's CUcontext)");
        if (num_dst < 0 || num_src < 0 || nnz < 0)
            return detail::fail(launch, kBadShape, "negative size: num_dst = " + std::to_string(num_dst) +
                                                       ", num_src = " + std::to_string(num_src) + ", nnz = " + std::to_string(nnz));
        if (!row_ptr) return detail::fail(launch, kNullPointer, "row_ptr is null");
        if (nnz > 0 && !col_idx) return detail::fail(launch, kNullPointer, "col_idx is null");
        if (row_ptr[0] != 0 || row_ptr[num_dst] != nnz)
            return detail::fail(launch, kBadGraph, "row_ptr must run from 0 to nnz = " + std::to_string(nnz) + ", got " +
                                                       std::to_string(row_ptr[0]) + " to " + std::to_string(row_ptr[num_dst]));
        int32_t max_degree = 0;
        for (int32_t v = 0; v < num_dst; v++) {
            if (row_ptr[v + 1] < row_ptr[v])
                return detail::fail(launch, kBadGraph, "row_ptr decreases at row " + std::to_string(v));
            max_degree = std::max(max_degree, row_ptr[v + 1] - row_ptr[v]);
        }
        bool identity = true;
        for (int32_t p = 0; p < nnz; p++) {
            if (col_idx[p] < 0 || col_idx[p] >= num_src)
                return detail::fail(launch, kBadGraph, "col_idx[" + std::to_string(p) + "] = " + std::to_string(col_idx[p]) +
                                                           " is not a source node in [0, " + std::to_string(num_src) + ")");
            if (edge_ids && (edge_ids[p] < 0 || edge_ids[p] >= nnz))
                return detail::fail(launch, kBadGraph, "edge_ids[" + std::to_string(p) + "] = " + std::to_string(edge_ids[p]) +
                                                           " is not an edge id in [0, " + std::to_string(nnz) + ")");
            identity = identity && (!edge_ids || edge_ids[p] == p);
        }
        release();
        detail::install_hooks();
        if (int rc = detail::upload(launch, col_idx, static_cast<size_t>(nnz), col_idx_, "col_idx")) return rc;
        if (edge_ids) {
            if (int rc = detail::upload(launch, edge_ids, static_cast<size_t>(nnz), edge_ids_, "edge_ids")) {
                detail::free_array(launch.context, col_idx_);
                return rc;
            }
        }
        context_ = launch.context;
        row_ptr_.assign(row_ptr, row_ptr + num_dst + 1);
        num_dst_ = num_dst, num_src_ = num_src, nnz_ = nnz, max_degree_ = max_degree;
        identity_edge_ids_ = identity;
        return kOk;
    }

    /// Frees the device arrays (in the context they were prepared in); the graph is then unprepared.
    void release() {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto &r : rows_)
            for (detail::DeviceArray *a : {&r->row_ptr, &r->row_order, &r->row_segs}) detail::free_array(context_, *a);
        rows_.clear();
        detail::free_array(context_, col_idx_);
        detail::free_array(context_, edge_ids_);
        context_ = nullptr;
    }

    bool prepared() const { return context_ != nullptr; }
    void *context() const { return context_; }
    int32_t num_dst() const { return num_dst_; }
    int32_t num_src() const { return num_src_; }
    int32_t nnz() const { return nnz_; }
    int32_t max_degree() const { return max_degree_; }
    /// nnz / num_dst, for gsparse_kernels::Dispatcher::select.
    double avg_row_length() const { return num_dst_ ? static_cast<double>(nnz_) / num_dst_ : 0.0; }
    /// Whether edge ids are the CSR positions (prepared without edge_ids, or with the identity).
    bool identity_edge_ids() const { return identity_edge_ids_; }

    halide_buffer_t *col_idx_buffer() { return col_idx_.raw_buffer(); }
    halide_buffer_t *edge_ids_buffer() { return edge_ids_.raw_buffer(); }

    /// The row layout for a schedule with row_tile rows per block, rows cut into segments of at
    /// most segment_len nonzeros (0: whole rows), rows taken in `order` (a RowOrder); built and
    /// copied to the device on first use.
    int rows(CudaLaunch &launch, int row_tile, int segment_len, int order, Rows **out) {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto &r : rows_)
            if (r->row_tile == row_tile && r->segment_len == segment_len && r->order == order) {
                *out = r.get();
                return kOk;
            }
        auto r = std::make_unique<Rows>();
        r->row_tile = row_tile, r->segment_len = segment_len, r->order = order;
        const int64_t tile = row_tile;
        int rc = kOk;
        if (segment_len == 0) {
            // Empty rows pad the offsets to a multiple of the row tile (two more entries, so that
            // the empty row num_dst exists for padded balanced positions).
            const int64_t padded = (num_dst_ + tile - 1) / tile * tile;
            std::vector<int32_t> offsets(row_ptr_);
            offsets.resize(static_cast<size_t>(padded + 2), nnz_);
            rc = detail::upload(launch, offsets.data(), offsets.size(), r->row_ptr, "row offsets");
            r->max_len = max_degree_;
            if (!rc && order != kRowIdOrder) {
                std::vector<int32_t> rows_in_order;
                if (order == kLocalityOrder) {
                    // The clustering reads the column ids: copied back from the device (prepare
                    // keeps no host copy).
                    std::vector<int32_t> cols(static_cast<size_t>(std::max(nnz_, 1)));
                    halide_buffer_t *b = col_idx_.raw_buffer();
                    b->host = reinterpret_cast<uint8_t *>(cols.data());
                    b->set_device_dirty(true);
                    rc = halide_copy_to_host(&launch, b);
                    b->host = nullptr;
                    b->set_device_dirty(false);
                    if (rc) rc = detail::fail(launch, rc, "copying col_idx back for the locality order failed: " + launch.error);
                    else rows_in_order = gsparse_locality::locality_order<int32_t>(num_dst_, num_src_, row_ptr_.data(), cols.data());
                } else {
                    rows_in_order.resize(static_cast<size_t>(num_dst_));
                    std::iota(rows_in_order.begin(), rows_in_order.end(), 0);
                    std::stable_sort(rows_in_order.begin(), rows_in_order.end(), [&](int32_t a, int32_t b) {
                        return row_ptr_[a + 1] - row_ptr_[a] > row_ptr_[b + 1] - row_ptr_[b];
                    });
                }
                rows_in_order.resize(static_cast<size_t>(std::max<int64_t>(padded, 1)), num_dst_);
                if (!rc) rc = detail::upload(launch, rows_in_order.data(), rows_in_order.size(), r->row_order, "row order");
            }
        } else {
            // Every row cut into segments of at most segment_len nonzeros; segment offsets padded
            // with empty segments to a multiple of the row tile.
            std::vector<int32_t> seg_ptr, row_segs;
            row_segs.reserve(static_cast<size_t>(num_dst_) + 1);
            for (int32_t v = 0; v < num_dst_; v++) {
                row_segs.push_back(static_cast<int32_t>(seg_ptr.size()));
                int32_t segs = 0;
                for (int32_t p = row_ptr_[v]; p < row_ptr_[v + 1]; p += segment_len, segs++) {
                    seg_ptr.push_back(p);
                    r->max_len = std::max(r->max_len, std::min(segment_len, row_ptr_[v + 1] - p));
                }
                r->max_segments = std::max(r->max_segments, segs);
            }
            row_segs.push_back(static_cast<int32_t>(seg_ptr.size()));
            r->num_segs = std::max<int32_t>(static_cast<int32_t>(seg_ptr.size()), 1);
            const int64_t padded = (r->num_segs + tile - 1) / tile * tile;
            seg_ptr.resize(static_cast<size_t>(padded + 1), nnz_);
            rc = detail::upload(launch, seg_ptr.data(), seg_ptr.size(), r->row_ptr, "segment offsets");
            if (!rc) rc = detail::upload(launch, row_segs.data(), row_segs.size(), r->row_segs, "row segments");
        }
        if (rc) {
            for (detail::DeviceArray *a : {&r->row_ptr, &r->row_order, &r->row_segs}) detail::free_array(context_, *a);
            return rc;
        }
        *out = r.get();
        rows_.push_back(std::move(r));
        return kOk;
    }

private:
    void *context_ = nullptr;
    std::vector<int32_t> row_ptr_;
    detail::DeviceArray col_idx_, edge_ids_;
    std::vector<std::unique_ptr<Rows>> rows_;
    std::mutex mu_;
    int32_t num_dst_ = 0, num_src_ = 0, nnz_ = 0, max_degree_ = 0;
    bool identity_edge_ids_ = true;
};

/// A COO graph in edge-id order (edge e: src_idx[e] -> dst_idx[e]) on the device of one CUDA
/// context, for emitted g-SDDMM kernels. The device copies are padded with edges 0 -> 0 to a
/// multiple of kEdgePad: a kernel's last block of edges reads index entries past the last edge
/// (its stores there are guarded). Not copyable; frees its device memory when destroyed (the context
/// must still exist then) or on release().
class CudaCoo {
public:
    /// The largest edge tile of an emitted g-SDDMM kernel.
    static constexpr int64_t kEdgePad = 1024;

    CudaCoo() = default;
    CudaCoo(const CudaCoo &) = delete;
    CudaCoo &operator=(const CudaCoo &) = delete;
    ~CudaCoo() { release(); }

    /// Checks the host arrays (every id in range) and copies them, padded, to the device of
    /// launch.context. Returns kOk, kNullPointer, kBadShape, kBadGraph (with launch.error saying why;
    /// no CUDA call is made then) or a Halide error code. The host arrays can be reused after it returns.
    int prepare(CudaLaunch &launch, int32_t num_edges, int32_t num_src, int32_t num_dst, const int32_t *src_idx,
                const int32_t *dst_idx) {
        launch.error.clear();
        if (!launch.context) return detail::fail(launch, kNullPointer, "launch.context is null (pass the application's CUcontext)");
        if (num_edges < 0 || num_src < 0 || num_dst < 0)
            return detail::fail(launch, kBadShape, "negative size: num_edges = " + std::to_string(num_edges) +
                                                       ", num_src = " + std::to_string(num_src) +
                                                       ", num_dst = " + std::to_string(num_dst));
        if (num_edges > 0 && (!src_idx || !dst_idx))
            return detail::fail(launch, kNullPointer, src_idx ? "dst_idx is null" : "src_idx is null");
        for (int32_t e = 0; e < num_edges; e++) {
            if (src_idx[e] < 0 || src_idx[e] >= num_src)
                return detail::fail(launch, kBadGraph, "src_idx[" + std::to_string(e) + "] = " + std::to_string(src_idx[e]) +
                                                           " is not a source node in [0, " + std::to_string(num_src) + ")");
            if (dst_idx[e] < 0 || dst_idx[e] >= num_dst)
                return detail::fail(launch, kBadGraph, "dst_idx[" + std::to_string(e) + "] = " + std::to_string(dst_idx[e]) +
                                                           " is not a destination node in [0, " + std::to_string(num_dst) + ")");
        }
        release();
        detail::install_hooks();
        const size_t padded = static_cast<size_t>((num_edges + kEdgePad - 1) / kEdgePad * kEdgePad);
        std::vector<int32_t> host(padded, 0);
        if (num_edges > 0) std::copy(src_idx, src_idx + num_edges, host.begin());
        if (int rc = detail::upload(launch, host.data(), host.size(), src_, "src_idx")) return rc;
        if (num_edges > 0) std::copy(dst_idx, dst_idx + num_edges, host.begin());
        if (int rc = detail::upload(launch, host.data(), host.size(), dst_, "dst_idx")) {
            detail::free_array(launch.context, src_);
            return rc;
        }
        context_ = launch.context;
        num_edges_ = num_edges, num_src_ = num_src, num_dst_ = num_dst;
        return kOk;
    }

    /// Frees the device arrays (in the context they were prepared in); the graph is then unprepared.
    void release() {
        detail::free_array(context_, src_);
        detail::free_array(context_, dst_);
        context_ = nullptr;
    }

    bool prepared() const { return context_ != nullptr; }
    void *context() const { return context_; }
    int32_t num_edges() const { return num_edges_; }
    int32_t num_src() const { return num_src_; }
    int32_t num_dst() const { return num_dst_; }
    halide_buffer_t *src_buffer() { return src_.raw_buffer(); }
    halide_buffer_t *dst_buffer() { return dst_.raw_buffer(); }

private:
    void *context_ = nullptr;
    detail::DeviceArray src_, dst_;
    int32_t num_edges_ = 0, num_src_ = 0, num_dst_ = 0;
};

namespace detail {

/// A feature tensor in device memory viewed as a Halide buffer (no copy; detached after the call).
template <typename T>
class DeviceView {
public:
    DeviceView(CudaLaunch &launch, const T *data, std::vector<int> sizes) : launch_(launch), buf_(nullptr, sizes) {
        rc_ = buf_.device_wrap_native(halide_cuda_device_interface(), reinterpret_cast<uint64_t>(data), &launch_);
    }
    ~DeviceView() {
        if (buf_.raw_buffer()->device) buf_.device_detach_native(&launch_);
    }
    DeviceView(const DeviceView &) = delete;
    DeviceView &operator=(const DeviceView &) = delete;
    int status() const { return rc_; }
    halide_buffer_t *get() { return buf_.raw_buffer(); }

private:
    CudaLaunch &launch_;
    Halide::Runtime::Buffer<T> buf_;
    int rc_ = 0;
};

}  // namespace detail

/// Releases what the Halide runtime keeps for launch.context (compiled kernel modules, cached
/// allocations); call it before destroying a context that ran emitted kernels.
inline int cuda_release(CudaLaunch &launch) {
    if (!launch.context) return detail::fail(launch, kNullPointer, "launch.context is null");
    detail::install_hooks();
    launch.error.clear();
    halide_device_release(&launch, halide_cuda_device_interface());  // reports errors through halide_error
    return launch.error.empty() ? static_cast<int>(kOk) : static_cast<int>(halide_error_code_generic_error);
}

}  // namespace gsparse_kernels
