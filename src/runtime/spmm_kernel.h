// A compiled g-SpMM kernel: the algorithm for one (op, layout, dtype, index layout), scheduled,
// JIT-compiled for one target, and callable on any graph and tensors that fit it.
#pragma once

#include <Halide.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/tensor.h"
#include "graph/graph.h"
#include "graph/graph_view.h"
#include "ops/spmm_algorithm.h"
#include "runtime/cuda_launch.h"
#include "runtime/kernel_cache.h"
#include "runtime/kernel_library.h"
#include "schedules/schedule_params.h"

namespace gsparse {

struct SpmmKernelKey {
    SpmmSpec spec;
    FeatureLayout layout;
    DType dtype = DType::F32;
    bool identity_edge_ids = true;
    ScheduleParams schedule;
    Device device = Device::CPU;

    std::string str() const;
};

/// The index layout a kernel for spec needs on g: identity edge ids unless the op reads edge ids and
/// g's edge ids are not the CSR positions (so one kernel serves every graph when ids are unused).
inline bool spmm_identity_edge_ids(const SpmmSpec &spec, const Graph &g) {
    return !reads_edge_ids(spec) || g.csr().identity_edge_ids();
}

class SpmmKernel {
public:
    /// Builds the algorithm, checks and applies the schedule (ScheduleError when invalid), compiles.
    explicit SpmmKernel(const SpmmKernelKey &key);
    /// The cached kernel for key (compiled on first use).
    static std::shared_ptr<const SpmmKernel> get(const SpmmKernelKey &key, KernelCache &cache = KernelCache::global());

    /// Runs on g. lhs/rhs/out (and arg_u/arg_e for max/min) must have the shapes of the key's layout
    /// (rows: num_src / num_edges / num_dst); throws ShapeError otherwise.
    /// On a CUDA kernel the tensors hold device pointers and launch names the context and stream.
    void run(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u, Tensor *arg_e,
             const CudaLaunch &launch = {}) const;

    /// Runs on a graph over caller arrays (no per-graph state: nothing is derived, copied or kept).
    /// The schedule must read only the CSR (KernelError for row orders, row splitting, source tiles
    /// and relabeled graphs, which need per-graph preprocessing).
    void run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u, Tensor *arg_e,
             const CudaLaunch &launch = {}) const;
    /// Whether run(GraphView) accepts this kernel's schedule.
    bool runs_on_views() const;

    /// Builds on the host what the kernel runs on in g and a first run would otherwise build before
    /// its launch: the relabeled graph, the row order, the edges in source-tile order and their runs
    /// (all kept by the graph). Thread-safe; the tuner calls it while other candidates are measured.
    void prepare(const Graph &g) const;
    /// Builds the arrays of g that run() reads on the kernel's device (prepare(), then on a GPU the
    /// device copies of the index arrays in the kernel's row order, of the relabeled graph or of the
    /// segments it runs on), which a first run on g would otherwise build before its launch. Kept
    /// with g; on the CPU the same as prepare().
    void upload(const Graph &g, const CudaLaunch &launch = {}) const;

    const SpmmKernelKey &key() const { return key_; }
    /// The library from the persistent kernel cache (kernels that run on views, cache on), or null.
    const KernelLibrary *library() const { return library_.get(); }
    /// The lowered statement of the scheduled pipeline (for inspection and IR tests).
    std::string lowered_stmt() const;

private:
    void run_cpu(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u, Tensor *arg_e) const;
    void run_cuda(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u, Tensor *arg_e,
                  const CudaLaunch &launch) const;
    /// A run on g of the kernel from the persistent cache: the graph's CSR (its device copy on a
    /// GPU) as a view, so a later process loads the kernel instead of compiling it.
    void run_library(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u, Tensor *arg_e,
                     const CudaLaunch &launch) const;
    /// Sets the graph parameters of a GPU run on graph (uploading its arrays on first use); returns
    /// the graph the kernel runs on (graph, or its relabeled form for relabeled kernels).
    const Graph &bind_graph_cuda(const Graph &graph, const CudaLaunch &launch, Halide::ParamMap &params) const;

    /// JIT-compiles the pipeline (once; runs on graph views of a cached kernel never need it).
    void compile_jit() const;
    /// Throws KernelError when a lowering pass the schedule relies on matched nothing.
    void check_lowering() const;

    SpmmKernelKey key_;
    mutable SpmmAlgorithm algo_;
    mutable Halide::Pipeline pipeline_;
    Halide::Target target_;
    std::shared_ptr<const KernelLibrary> library_;  ///< from the persistent kernel cache (view runs)
    mutable std::once_flag jit_once_;
};

}  // namespace gsparse
