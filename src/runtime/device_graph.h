// Device copies of a graph's index arrays for GPU kernels. They are uploaded once per graph, CUDA
// context and padding tile, kept with the graph (Graph::attachment), and freed in the context they
// were allocated in. row_ptr is padded with empty rows to a multiple of the row tile, so blocks of a
// schedule with kMTile rows never read past its end; a row tile that divides 32 (every kMTile of
// the schedules) gets the copy padded to 32 rows, so kernels of every row tile share one copy.
#pragma once

#include <Halide.h>

#include <initializer_list>
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "runtime/cuda_launch.h"

namespace gsparse {

/// Frees device buffers through the CUDA context they were allocated in when it goes away. Every
/// device object below holds one, declared after its buffers: it runs before they are destroyed,
/// also when the object's constructor throws halfway (an out-of-memory device). A Halide::Buffer
/// left to free itself would ask the JIT runtime for a context of its own, which cannot be created
/// on a full device, and Halide aborts the process when such a free fails.
class DeviceBufferRelease {
public:
    DeviceBufferRelease(const CudaLaunch &launch, std::initializer_list<Halide::Buffer<> *> buffers)
        : launch_(launch), buffers_(buffers) {}
    ~DeviceBufferRelease();
    DeviceBufferRelease(const DeviceBufferRelease &) = delete;
    DeviceBufferRelease &operator=(const DeviceBufferRelease &) = delete;

private:
    CudaLaunch launch_;
    std::vector<Halide::Buffer<> *> buffers_;
};

class DeviceCsr {
public:
    DeviceCsr(const Graph &g, int row_tile, const CudaLaunch &launch, const Halide::Target &target);
    DeviceCsr(const DeviceCsr &) = delete;
    DeviceCsr &operator=(const DeviceCsr &) = delete;

    Halide::Buffer<> row_ptr, col_idx, edge_ids;  ///< edge_ids is undefined for identity edge ids
    /// balancedIdx (rows by length, longest first), padded to the row tile with the empty row
    /// num_rows (row_ptr holds at least two padding entries, so that row exists).
    Halide::Buffer<> balanced;

    /// The device copy for (g, row_tile, launch.context), created on first use (shared by the row
    /// tiles that divide 32).
    static std::shared_ptr<DeviceCsr> get(const Graph &g, int row_tile, const CudaLaunch &launch,
                                          const Halide::Target &target);

private:
    std::vector<index_t> row_ptr_host_, col_idx_pad_, balanced_host_;
    DeviceBufferRelease release_;
};

/// The locality order of a graph's rows (Graph::locality_idx, rowBalance = 2) on the device, padded to
/// the row tile with the empty row num_rows like DeviceCsr::balanced. Kept apart from DeviceCsr so that
/// the clustering runs only for schedules that use it.
class DeviceRowOrder {
public:
    DeviceRowOrder(const Graph &g, int row_tile, const CudaLaunch &launch, const Halide::Target &target);
    DeviceRowOrder(const DeviceRowOrder &) = delete;
    DeviceRowOrder &operator=(const DeviceRowOrder &) = delete;

    Halide::Buffer<> order;

    static std::shared_ptr<DeviceRowOrder> get(const Graph &g, int row_tile, const CudaLaunch &launch,
                                               const Halide::Target &target);

private:
    std::vector<index_t> host_;
    DeviceBufferRelease release_;
};

/// Row segments of a graph for row-split g-SpMM (graph/segments.h), on the device: every row cut
/// into segments of at most segment_len nonzeros, or (src_tile > 0) the runs of one row within one
/// tile of source ids, tile by tile, cut after segment_len nonzeros when segment_len > 0. seg_ptr
/// holds segment offsets into the edge list (padded with empty segments to a multiple of the row
/// tile) and row_segs[v] the first of row v's segments (or, with source tiles, of its entries in
/// seg_ids). With source tiles, col_idx and edge_ids are the edges in source-tile order and row_ptr
/// the CSR's row offsets (row degrees for mean), so such a kernel needs no DeviceCsr.
class DeviceSegments {
public:
    DeviceSegments(const Graph &g, int segment_len, int64_t src_tile, int row_tile, const CudaLaunch &launch,
                   const Halide::Target &target);
    DeviceSegments(const DeviceSegments &) = delete;
    DeviceSegments &operator=(const DeviceSegments &) = delete;

    Halide::Buffer<> seg_ptr, row_segs;
    Halide::Buffer<> seg_ids, col_idx, edge_ids, row_ptr;  ///< defined with source tiles
    int32_t num_segs = 0, max_segments = 0, max_segment_len = 0;

    static std::shared_ptr<DeviceSegments> get(const Graph &g, int segment_len, int64_t src_tile, int row_tile,
                                               const CudaLaunch &launch, const Halide::Target &target);

private:
    std::vector<index_t> seg_ptr_host_, row_segs_host_, pad_;
    DeviceBufferRelease release_;
};

/// The segment table of user programs that split rows (dsl::ScheduleContext::split_rows): every row
/// cut into segments of at most segment_len nonzeros (split_row_segments), with the row of every
/// segment (segment_rows). With src_tile > 0 the segments are the runs of one row within one tile
/// of src_tile source ids, tile by tile, cut after segment_len nonzeros (Graph::source_tile_segments):
/// seg_ptr then holds offsets into the edges in source-tile order (col_idx and edge_ids, the
/// graph's coo_by_dst(src_tile)), and row v's segments are seg_ids[row_segs[v] .. row_segs[v + 1]).
/// A graph without edges gets one empty segment, so every array holds an entry and a kernel's grid
/// is never empty. On the host (made once per graph, length and tile) or, with a launch, uploaded
/// to the device once per graph, length, tile and CUDA context.
class RowSplitTable {
public:
    RowSplitTable(const Graph &g, int segment_len, int64_t src_tile, const CudaLaunch *launch,
                  const Halide::Target &target);
    RowSplitTable(const RowSplitTable &) = delete;
    RowSplitTable &operator=(const RowSplitTable &) = delete;

    Halide::Buffer<> seg_ptr, seg_row, row_segs;  ///< host buffers, or device buffers with a launch
    Halide::Buffer<> seg_ids, col_idx, edge_ids;  ///< defined with source tiles
    int32_t num_segs = 0, max_segments = 0, max_segment_len = 0;

    /// The host table of (g, segment_len, src_tile).
    static std::shared_ptr<RowSplitTable> host(const Graph &g, int segment_len, int64_t src_tile = 0);
    /// The device table of (g, segment_len, src_tile, launch.context).
    static std::shared_ptr<RowSplitTable> device(const Graph &g, int segment_len, const CudaLaunch &launch,
                                                 const Halide::Target &target, int64_t src_tile = 0);

private:
    std::vector<index_t> seg_ptr_host_, seg_row_host_, row_segs_host_, pad_;
    /// With source tiles: the graph's own arrays (or pad_ where one is empty), read in place.
    std::vector<index_t> *seg_ids_src_ = nullptr, *col_src_ = nullptr, *eid_src_ = nullptr;
    std::unique_ptr<DeviceBufferRelease> release_;
};

/// Row tails of a graph for the row-tail form of g-SpMM (graph/segments.h: row_tails; the built-in
/// operators' rowTails and user programs' ScheduleContext::split_row_tails): tail_start, tail_end
/// and tail_row, with one empty tail (start = end = nnz, row 0) when the graph has no long row, so
/// that the tails' kernel still launches a valid grid (its blocks guard the tails past num_tails).
/// num_tails counts the tails. On the host (made once per graph and length) or, with a launch,
/// uploaded to the device once per graph, length and CUDA context.
class RowTailTable {
public:
    RowTailTable(const Graph &g, int tail_len, const CudaLaunch *launch, const Halide::Target &target);
    RowTailTable(const RowTailTable &) = delete;
    RowTailTable &operator=(const RowTailTable &) = delete;

    Halide::Buffer<> tail_start, tail_end, tail_row;  ///< host buffers, or device buffers with a launch
    int32_t num_tails = 0;

    /// The device table of (g, tail_len, launch.context).
    static std::shared_ptr<RowTailTable> device(const Graph &g, int tail_len, const CudaLaunch &launch,
                                                const Halide::Target &target);
    /// The host table of (g, tail_len).
    static std::shared_ptr<RowTailTable> host(const Graph &g, int tail_len);

private:
    std::vector<index_t> start_host_, end_host_, row_host_;
    std::unique_ptr<DeviceBufferRelease> release_;
};

/// COO arrays on the device (for g-SDDMM), padded with edges 0 -> 0 to a multiple of
/// kMaxSddmmEdgeTile: in edge-id order, or grouped by destination (the CSR order, regrouped by
/// source tiles when src_tile > 0: Graph::coo_by_dst) with edge_of[i] the id of the edge at
/// position i.
class DeviceCoo {
public:
    DeviceCoo(const Graph &g, bool by_dst, int64_t src_tile, const CudaLaunch &launch, const Halide::Target &target);
    DeviceCoo(const DeviceCoo &) = delete;
    DeviceCoo &operator=(const DeviceCoo &) = delete;

    Halide::Buffer<> src, dst, edge_of;  ///< edge_of is defined when grouped by destination

    static std::shared_ptr<DeviceCoo> get(const Graph &g, bool by_dst, int64_t src_tile, const CudaLaunch &launch,
                                          const Halide::Target &target);

private:
    std::vector<index_t> src_host_, dst_host_, edge_of_host_;
    DeviceBufferRelease release_;
};

/// The edge id of every CSR position on the device (the graph's edge ids, or 0, 1, ... for a graph
/// whose edge ids are the positions), for kernels that always read edge ids (user programs).
class DeviceEdgeIds {
public:
    DeviceEdgeIds(const Graph &g, const CudaLaunch &launch, const Halide::Target &target);
    DeviceEdgeIds(const DeviceEdgeIds &) = delete;
    DeviceEdgeIds &operator=(const DeviceEdgeIds &) = delete;

    Halide::Buffer<> ids;

    static std::shared_ptr<DeviceEdgeIds> get(const Graph &g, const CudaLaunch &launch, const Halide::Target &target);

private:
    std::vector<index_t> host_;
    DeviceBufferRelease release_;
};

}  // namespace gsparse
