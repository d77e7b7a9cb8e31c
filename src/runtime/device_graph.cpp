#include "runtime/device_graph.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "graph/validate.h"
#include "schedules/gpu_schedules.h"

namespace gsparse {

namespace {

/// A host-backed buffer copied to the device in the launch's context.
Halide::Buffer<> upload(std::vector<index_t> &host, const CudaLaunch &launch, const Halide::Target &target,
                        const char *name) {
    Halide::Buffer<> b(Halide::Int(32), host.data(), {static_cast<int>(host.size())}, name);
    b.set_host_dirty();
    CudaJITContext ctx(launch);
    ctx.capture_errors();
    Halide::Runtime::Buffer<> *rb = b.get();
    int err = rb->copy_to_device(cuda_device_interface(target), &ctx);
    if (err) rb->device_free(&ctx);  // a copy that failed after its allocation frees it here
    if (err == halide_error_code_device_malloc_failed || err == halide_error_code_out_of_memory ||
        ctx.errors().find("OUT_OF_MEMORY") != std::string::npos)
        fail<KernelError>("out of GPU memory: the graph's ", name, " (", host.size() * sizeof(index_t),
                          " bytes) does not fit on the device (", ctx.errors(), ")");
    if (err) fail<KernelError>("copying ", name, " to the GPU failed (Halide error ", err, "): ", ctx.errors());
    return b;
}

/// Device copies of row offsets and row orders are padded to a whole number of this many rows (or
/// segments), not to the kernel's row tile: every row tile of the schedules (kMTile, a power of two
/// up to 32) divides it, so one copy of a graph's large arrays serves kernels of every row tile.
constexpr int kPadRows = 32;

int padding_tile(int row_tile) { return row_tile > 0 && kPadRows % row_tile == 0 ? kPadRows : row_tile; }

std::string key_of(const char *what, const void *context, int tile) {
    std::ostringstream os;
    os << what << '/' << context << '/' << tile;
    return os.str();
}

}  // namespace

DeviceBufferRelease::~DeviceBufferRelease() {
    CudaJITContext ctx(launch_);
    ctx.capture_errors();  // a failed free leaves nothing to recover; it must not abort the process
    for (Halide::Buffer<> *b : buffers_)
        if (b->defined() && b->raw_buffer()->device) b->get()->device_free(&ctx);
}

DeviceCsr::DeviceCsr(const Graph &g, int row_tile, const CudaLaunch &launch, const Halide::Target &target)
    : release_(launch, {&row_ptr, &col_idx, &edge_ids, &balanced}) {
    const CSR &csr = g.csr();
    const int64_t rows = csr.num_rows;
    const int64_t padded = (rows + row_tile - 1) / row_tile * row_tile;
    row_ptr_host_ = csr.row_ptr;
    row_ptr_host_.resize(static_cast<size_t>(padded + 2), static_cast<index_t>(csr.nnz()));
    row_ptr = upload(row_ptr_host_, launch, target, "row_ptr");
    balanced_host_ = g.balanced_idx();
    validate_permutation(balanced_host_, rows, "balancedIdx");
    balanced_host_.resize(static_cast<size_t>(std::max<int64_t>(padded, 1)), static_cast<index_t>(rows));
    balanced = upload(balanced_host_, launch, target, "row_order");
    // Index buffers are never empty, so a graph without edges still binds valid buffers.
    std::vector<index_t> &cols = csr.nnz() ? const_cast<std::vector<index_t> &>(csr.col_idx) : (col_idx_pad_ = {0});
    col_idx = upload(cols, launch, target, "col_idx");
    if (!csr.identity_edge_ids()) edge_ids = upload(const_cast<std::vector<index_t> &>(csr.edge_ids), launch, target, "edge_ids");
}

std::shared_ptr<DeviceCsr> DeviceCsr::get(const Graph &g, int row_tile, const CudaLaunch &launch,
                                          const Halide::Target &target) {
    row_tile = padding_tile(row_tile);
    return std::static_pointer_cast<DeviceCsr>(g.attachment(key_of("cuda_csr", launch.context, row_tile), [&] {
        return std::static_pointer_cast<void>(std::make_shared<DeviceCsr>(g, row_tile, launch, target));
    }));
}

DeviceRowOrder::DeviceRowOrder(const Graph &g, int row_tile, const CudaLaunch &launch, const Halide::Target &target)
    : release_(launch, {&order}) {
    const int64_t rows = g.num_dst();
    const int64_t padded = (rows + row_tile - 1) / row_tile * row_tile;
    host_ = g.locality_idx();
    validate_permutation(host_, rows, "the locality order");
    host_.resize(static_cast<size_t>(std::max<int64_t>(padded, 1)), static_cast<index_t>(rows));
    order = upload(host_, launch, target, "row_order");
}

std::shared_ptr<DeviceRowOrder> DeviceRowOrder::get(const Graph &g, int row_tile, const CudaLaunch &launch,
                                                    const Halide::Target &target) {
    row_tile = padding_tile(row_tile);
    return std::static_pointer_cast<DeviceRowOrder>(g.attachment(key_of("cuda_locality_order", launch.context, row_tile), [&] {
        return std::static_pointer_cast<void>(std::make_shared<DeviceRowOrder>(g, row_tile, launch, target));
    }));
}

DeviceSegments::DeviceSegments(const Graph &g, int segment_len, int64_t src_tile, int row_tile,
                               const CudaLaunch &launch, const Halide::Target &target)
    : release_(launch, {&seg_ptr, &row_segs, &seg_ids, &col_idx, &edge_ids, &row_ptr}) {
    const CSR &csr = g.csr();
    // Source-tile runs are kept by the graph (uploaded from there); a plain split is built here.
    RowSegments split;
    if (src_tile == 0) split = split_row_segments(csr, segment_len);
    const RowSegments &segs = src_tile > 0 ? g.source_tile_segments(src_tile, segment_len) : split;
    num_segs = static_cast<int32_t>(segs.num_segs());
    max_segments = segs.max_segments;
    max_segment_len = segs.max_segment_len;
    // Padded with empty segments to the row tile, so the last block reads in-range offsets.
    const int64_t padded = (std::max<int64_t>(num_segs, 1) + row_tile - 1) / row_tile * row_tile;
    seg_ptr_host_ = segs.seg_ptr;
    seg_ptr_host_.resize(static_cast<size_t>(padded + 1), static_cast<index_t>(csr.nnz()));
    seg_ptr = upload(seg_ptr_host_, launch, target, "seg_ptr");
    if (src_tile == 0) {
        row_segs_host_ = std::move(split.row_segs);
        row_segs = upload(row_segs_host_, launch, target, "row_segs");
        return;
    }
    // The edges in source-tile order, each row's runs and the CSR's row offsets (for degrees), all
    // kept by the graph. Index buffers are never empty, so a graph without edges binds valid ones.
    auto shared = [&](const std::vector<index_t> &host, const char *name) {
        return upload(host.empty() ? pad_ : const_cast<std::vector<index_t> &>(host), launch, target, name);
    };
    const COO &tiled = g.coo_by_dst(src_tile);
    pad_ = {0};
    row_segs = shared(segs.row_segs, "row_segs");
    seg_ids = shared(segs.seg_ids, "seg_ids");
    col_idx = shared(tiled.col, "col_idx");
    edge_ids = shared(tiled.edge_ids, "edge_ids");
    row_ptr = shared(csr.row_ptr, "row_ptr");
}

std::shared_ptr<DeviceSegments> DeviceSegments::get(const Graph &g, int segment_len, int64_t src_tile, int row_tile,
                                                    const CudaLaunch &launch, const Halide::Target &target) {
    row_tile = padding_tile(row_tile);
    const std::string key = "cuda_segments/" + std::to_string(segment_len) + "/" + std::to_string(src_tile);
    return std::static_pointer_cast<DeviceSegments>(g.attachment(key_of(key.c_str(), launch.context, row_tile), [&] {
        return std::static_pointer_cast<void>(
            std::make_shared<DeviceSegments>(g, segment_len, src_tile, row_tile, launch, target));
    }));
}

RowSplitTable::RowSplitTable(const Graph &g, int segment_len, int64_t src_tile, const CudaLaunch *launch,
                             const Halide::Target &target) {
    const CSR &csr = g.csr();
    if (src_tile > 0) {
        // Runs of one row within one source tile, in tile order; a segment's row is its first edge's.
        const RowSegments &segs = g.source_tile_segments(src_tile, segment_len);
        const COO &tiled = g.coo_by_dst(src_tile);
        seg_ptr_host_ = segs.seg_ptr;
        row_segs_host_ = segs.row_segs;
        for (int64_t t = 0; t < segs.num_segs(); ++t)
            seg_row_host_.push_back(tiled.row[static_cast<size_t>(segs.seg_ptr[static_cast<size_t>(t)])]);
        max_segments = segs.max_segments;
        max_segment_len = segs.max_segment_len;
        // The regrouped edges and the rows' segment lists are the graph's own (kept as long as this
        // table, an attachment of the same graph), read in place. Index arrays are never empty: a
        // graph without edges binds one unread entry.
        pad_ = {0};
        auto shared = [&](const std::vector<index_t> &v) {
            return v.empty() ? &pad_ : const_cast<std::vector<index_t> *>(&v);
        };
        seg_ids_src_ = shared(segs.seg_ids);
        col_src_ = shared(tiled.col);
        eid_src_ = shared(tiled.edge_ids);
    } else {
        RowSegments segs = split_row_segments(csr, segment_len);
        seg_row_host_ = segment_rows(segs);
        max_segments = segs.max_segments;
        max_segment_len = segs.max_segment_len;
        seg_ptr_host_ = std::move(segs.seg_ptr);
        row_segs_host_ = std::move(segs.row_segs);
    }
    if (seg_row_host_.empty()) {
        // One empty segment (no row lists it): a grid over the segments always has a block.
        seg_ptr_host_ = {0, 0};
        seg_row_host_ = {0};
    }
    num_segs = static_cast<int32_t>(seg_row_host_.size());
    const bool tiles = src_tile > 0;
    if (launch) {
        release_ = std::make_unique<DeviceBufferRelease>(*launch, std::initializer_list<Halide::Buffer<> *>{
                                                                      &seg_ptr, &seg_row, &row_segs, &seg_ids,
                                                                      &col_idx, &edge_ids});
        seg_ptr = upload(seg_ptr_host_, *launch, target, "seg_ptr");
        seg_row = upload(seg_row_host_, *launch, target, "seg_row");
        row_segs = upload(row_segs_host_, *launch, target, "row_segs");
        if (tiles) {
            seg_ids = upload(*seg_ids_src_, *launch, target, "seg_ids");
            col_idx = upload(*col_src_, *launch, target, "col_idx");
            edge_ids = upload(*eid_src_, *launch, target, "edge_ids");
        }
        return;
    }
    auto wrap = [](std::vector<index_t> &host, const char *name) {
        return Halide::Buffer<>(Halide::Int(32), host.data(), {static_cast<int>(host.size())}, name);
    };
    seg_ptr = wrap(seg_ptr_host_, "seg_ptr");
    seg_row = wrap(seg_row_host_, "seg_row");
    row_segs = wrap(row_segs_host_, "row_segs");
    if (tiles) {
        seg_ids = wrap(*seg_ids_src_, "seg_ids");
        col_idx = wrap(*col_src_, "col_idx");
        edge_ids = wrap(*eid_src_, "edge_ids");
    }
}

std::shared_ptr<RowSplitTable> RowSplitTable::host(const Graph &g, int segment_len, int64_t src_tile) {
    const std::string key = "host_row_split/" + std::to_string(segment_len) + "/" + std::to_string(src_tile);
    return std::static_pointer_cast<RowSplitTable>(g.attachment(key, [&] {
        return std::static_pointer_cast<void>(
            std::make_shared<RowSplitTable>(g, segment_len, src_tile, nullptr, Halide::Target()));
    }));
}

std::shared_ptr<RowSplitTable> RowSplitTable::device(const Graph &g, int segment_len, const CudaLaunch &launch,
                                                     const Halide::Target &target, int64_t src_tile) {
    const std::string key = "cuda_row_split/" + std::to_string(segment_len) + "/" + std::to_string(src_tile);
    return std::static_pointer_cast<RowSplitTable>(g.attachment(key_of(key.c_str(), launch.context, 1), [&] {
        return std::static_pointer_cast<void>(std::make_shared<RowSplitTable>(g, segment_len, src_tile, &launch, target));
    }));
}

RowTailTable::RowTailTable(const Graph &g, int tail_len, const CudaLaunch *launch, const Halide::Target &target) {
    const CSR &csr = g.csr();
    RowTails tails = row_tails(csr, tail_len);
    const int64_t padded = std::max<int64_t>(tails.num_tails(), 1);
    start_host_ = std::move(tails.tail_start);
    end_host_ = std::move(tails.tail_end);
    row_host_ = std::move(tails.tail_row);
    start_host_.resize(static_cast<size_t>(padded), static_cast<index_t>(csr.nnz()));
    end_host_.resize(static_cast<size_t>(padded), static_cast<index_t>(csr.nnz()));
    row_host_.resize(static_cast<size_t>(padded), 0);
    num_tails = static_cast<int32_t>(padded);
    if (!launch) {
        auto wrap = [](std::vector<index_t> &host, const char *name) {
            return Halide::Buffer<>(Halide::Int(32), host.data(), {static_cast<int>(host.size())}, name);
        };
        tail_start = wrap(start_host_, "tail_start");
        tail_end = wrap(end_host_, "tail_end");
        tail_row = wrap(row_host_, "tail_row");
        return;
    }
    release_ = std::make_unique<DeviceBufferRelease>(*launch, std::initializer_list<Halide::Buffer<> *>{
                                                                  &tail_start, &tail_end, &tail_row});
    tail_start = upload(start_host_, *launch, target, "tail_start");
    tail_end = upload(end_host_, *launch, target, "tail_end");
    tail_row = upload(row_host_, *launch, target, "tail_row");
}

std::shared_ptr<RowTailTable> RowTailTable::device(const Graph &g, int tail_len, const CudaLaunch &launch,
                                                   const Halide::Target &target) {
    const std::string key = "cuda_tails/" + std::to_string(tail_len);
    return std::static_pointer_cast<RowTailTable>(g.attachment(key_of(key.c_str(), launch.context, 1), [&] {
        return std::static_pointer_cast<void>(std::make_shared<RowTailTable>(g, tail_len, &launch, target));
    }));
}

std::shared_ptr<RowTailTable> RowTailTable::host(const Graph &g, int tail_len) {
    const std::string key = "host_tails/" + std::to_string(tail_len);
    return std::static_pointer_cast<RowTailTable>(g.attachment(key, [&] {
        return std::static_pointer_cast<void>(std::make_shared<RowTailTable>(g, tail_len, nullptr, Halide::Target()));
    }));
}

DeviceCoo::DeviceCoo(const Graph &g, bool by_dst, int64_t src_tile, const CudaLaunch &launch,
                     const Halide::Target &target)
    : release_(launch, {&src, &dst, &edge_of}) {
    const COO &coo = by_dst ? g.coo_by_dst(src_tile) : g.coo();
    // Padded with edges 0 -> 0 to a whole number of the largest edge tile, so the last block of a
    // g-SDDMM kernel reads in-range ids (its stores past the last edge are guarded).
    const int64_t padded = (coo.nnz() + kMaxSddmmEdgeTile - 1) / kMaxSddmmEdgeTile * kMaxSddmmEdgeTile;
    auto pad = [&](std::vector<index_t> &host, const std::vector<index_t> &ids) {
        host.reserve(static_cast<size_t>(std::max<int64_t>(padded, 1)));
        host.assign(ids.begin(), ids.end());
        host.resize(static_cast<size_t>(std::max<int64_t>(padded, 1)), 0);
    };
    pad(src_host_, coo.col);
    pad(dst_host_, coo.row);
    src = upload(src_host_, launch, target, "src_idx");
    dst = upload(dst_host_, launch, target, "dst_idx");
    if (by_dst) {
        pad(edge_of_host_, coo.edge_ids);
        edge_of = upload(edge_of_host_, launch, target, "edge_of");
    }
}

std::shared_ptr<DeviceCoo> DeviceCoo::get(const Graph &g, bool by_dst, int64_t src_tile, const CudaLaunch &launch,
                                          const Halide::Target &target) {
    const std::string key = by_dst ? "cuda_coo_by_dst/" + std::to_string(src_tile) : std::string("cuda_coo");
    return std::static_pointer_cast<DeviceCoo>(g.attachment(key_of(key.c_str(), launch.context, 0), [&] {
        return std::static_pointer_cast<void>(std::make_shared<DeviceCoo>(g, by_dst, src_tile, launch, target));
    }));
}

DeviceEdgeIds::DeviceEdgeIds(const Graph &g, const CudaLaunch &launch, const Halide::Target &target)
    : release_(launch, {&ids}) {
    const CSR &csr = g.csr();
    host_.resize(static_cast<size_t>(std::max<int64_t>(csr.nnz(), 1)), 0);
    for (int64_t p = 0; p < csr.nnz(); ++p) host_[static_cast<size_t>(p)] = csr.edge_id(p);
    ids = upload(host_, launch, target, "edge_ids");
}

std::shared_ptr<DeviceEdgeIds> DeviceEdgeIds::get(const Graph &g, const CudaLaunch &launch,
                                                  const Halide::Target &target) {
    return std::static_pointer_cast<DeviceEdgeIds>(g.attachment(key_of("cuda_edge_ids", launch.context, 0), [&] {
        return std::static_pointer_cast<void>(std::make_shared<DeviceEdgeIds>(g, launch, target));
    }));
}

}  // namespace gsparse
