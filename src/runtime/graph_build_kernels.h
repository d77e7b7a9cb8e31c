// The compiled graph-build pipelines (ops/graph_build_algorithm.h, scheduled by
// schedules/graph_build.h) for one id type and device, each callable on caller memory. Like the
// graph-view operator kernels, they come from the persistent kernel cache when that is on; each
// pipeline is compiled (or loaded) on its first use, so a process that builds only COO graphs never
// compiles the CSR's. api/view_build.h builds graph views with them.
#pragma once

#include <Halide.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/tensor.h"
#include "graph/formats.h"
#include "ops/graph_build_algorithm.h"
#include "runtime/compiled_pipeline.h"
#include "runtime/cuda_launch.h"
#include "runtime/kernel_cache.h"

namespace gsparse {

/// Threads of the statistics' first pass for num_edges edges (about 16 edges a thread), and the
/// int64 slots of the workspace the passes use (two areas of statistics that the combining passes
/// alternate between).
int64_t coo_stats_parts(int64_t num_edges);
int64_t coo_stats_workspace_slots(int64_t num_edges);

class GraphBuildKernels {
public:
    GraphBuildKernels(DType index, Device device);
    /// The kernels of (index, device), compiled or loaded once per process.
    static std::shared_ptr<const GraphBuildKernels> get(DType index, Device device,
                                                        KernelCache &cache = KernelCache::global());

    /// Partial statistics in the workspace: parts x kCooStatCount int64 values at data.
    struct Partials {
        const int64_t *data = nullptr;
        int64_t parts = 0;
    };
    /// The statistics of the edges src[i] -> dst[i], i < num_edges (> 0), into the workspace
    /// (coo_stats_workspace_slots int64 slots on the kernels' device), combined on the device down
    /// to at most kHostPartials partials (reading those back costs less than another kernel).
    static constexpr int64_t kHostPartials = 256;
    Partials coo_stats(const Tensor &src, const Tensor &dst, int64_t num_edges, int64_t *workspace,
                       const CudaLaunch &launch) const;
    /// row_ptr[r] for r < rows: the first position of a destination >= r among num_edges
    /// destinations (the CSR's row offsets when they are sorted; dst holds at least one entry).
    void row_offsets(const Tensor &dst, int64_t num_edges, index_t *row_ptr, int64_t rows,
                     const CudaLaunch &launch) const;
    /// out[i] = int32(in[i]) for i < count, 0 for count <= i < len (in holds at least one
    /// entry).
    void narrow(const Tensor &in, int64_t count, index_t *out, int64_t len, const CudaLaunch &launch) const;
    /// narrow of a and b into out_a and out_b, one kernel.
    void narrow_pair(const Tensor &a, const Tensor &b, int64_t count, index_t *out_a, index_t *out_b, int64_t len,
                     const CudaLaunch &launch) const;

    /// The graph of the int32 CSR (row_ptr [rows > num_dst], col_idx [>= max(num_edges, 1)]) with
    /// one self-loop u -> u appended at the end of every row u < loops: its row offsets into
    /// out_row_ptr [out_rows > num_dst] (padded with the new edge count), its COO in position order
    /// into coo_src and coo_dst and the flags of the graph's own self-loops into own_loops (each
    /// coo_len >= num_edges + loops entries; padded with 0). Two kernels.
    void append_self_loops(const index_t *row_ptr, int64_t rows, const index_t *col_idx, int64_t num_dst,
                           int64_t num_edges, int64_t loops, index_t *out_row_ptr, int64_t out_rows, index_t *coo_src,
                           index_t *coo_dst, uint8_t *own_loops, int64_t coo_len, const CudaLaunch &launch) const;

    /// The same graph from a COO alone (src, dst [>= max(num_edges, 1)] int32): the edges in their
    /// order, then the loops (u, u) for u < loops, with the flags of the graph's own self-loops.
    /// One kernel.
    void append_self_loops_to_coo(const index_t *src, const index_t *dst, int64_t num_edges, int64_t loops,
                                  index_t *coo_src, index_t *coo_dst, uint8_t *own_loops, int64_t coo_len,
                                  const CudaLaunch &launch) const;

    /// GCN's edge weights of a self-loop graph (its COO src, dst and own-loop flags, coo_len entries
    /// each, num_edges >= 1 edges, padded to view_coo_length on CUDA; num_dst >= 1 rows, loops
    /// appended; ops/graph_build_algorithm.h, gcn_weights) into weights [len >= num_edges] float32,
    /// the degree counters into degrees [num_dst x 2] int32. Two kernels.
    void gcn_weights(const index_t *src, const index_t *dst, const uint8_t *own_loops, int64_t coo_len,
                     int64_t num_edges, int64_t num_dst, int64_t loops, float fill, bool normalize, int32_t *degrees,
                     float *weights, int64_t len, const CudaLaunch &launch) const;

    /// The lowered statements (with the PTX of CUDA kernels), for tests.
    std::string lowered_stmts() const;

private:
    /// A scheduled algorithm and its pipeline, compiled on first use; name keys the kernel cache and
    /// names the kernel in errors (with the device and, for stages that read the edges' ids, the id
    /// type: key()).
    template <typename A>
    struct Stage {
        explicit Stage(const char *n, bool by_id_type = true) : name(n), typed(by_id_type) {}
        const char *name;
        bool typed;
        A algo;
        std::once_flag once;
        std::unique_ptr<CompiledPipeline> compiled;
    };
    template <typename A>
    const CompiledPipeline &compiled(Stage<A> &stage) const;

    DType index_;
    Device device_;
    mutable Stage<CooStatsAlgorithm> stats_{"coo_stats"};
    // The combining pass reads int64 statistics whatever the ids' type, the self-loop stages int32
    // arrays.
    mutable Stage<StatsCombineAlgorithm> combine_{"stats_combine", false};
    mutable Stage<RowOffsetsAlgorithm> rows_{"row_offsets"};
    mutable Stage<NarrowIndexAlgorithm> narrow_{"narrow_index"};
    mutable Stage<NarrowPairAlgorithm> pair_{"narrow_pair"};
    mutable Stage<LoopRowPtrAlgorithm> loop_rows_{"loop_row_ptr", false};
    mutable Stage<LoopCooAlgorithm> loop_coo_{"loop_coo", false};
    mutable Stage<LoopCooAppendAlgorithm> loop_append_{"loop_coo_append", false};
    mutable Stage<LoopDegreesAlgorithm> loop_degrees_{"loop_degrees", false};
    mutable Stage<GcnWeightsAlgorithm> gcn_weights_{"gcn_weights", false};

    template <typename A>
    std::string key(const Stage<A> &stage) const;
};

}  // namespace gsparse
