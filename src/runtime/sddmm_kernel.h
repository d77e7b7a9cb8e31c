// A compiled g-SDDMM kernel: the algorithm for one (op, targets, layout, dtype), scheduled,
// JIT-compiled for one target, and callable on any graph and tensors that fit it.
#pragma once

#include <Halide.h>

#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>

#include "core/tensor.h"
#include "graph/graph.h"
#include "graph/graph_view.h"
#include "runtime/cuda_launch.h"
#include "ops/sddmm_algorithm.h"
#include "runtime/kernel_cache.h"
#include "runtime/kernel_library.h"
#include "schedules/schedule_params.h"

namespace gsparse {

struct SddmmKernelKey {
    SddmmSpec spec;
    FeatureLayout layout;
    DType dtype = DType::F32;
    ScheduleParams schedule;
    Device device = Device::CPU;
    /// 64-bit indexing; false when every tensor of the call has fewer than 2^31 elements.
    bool large_buffers = true;

    /// Sets large_buffers from the call's tensors: 32-bit indexing (and with it the register form of
    /// gpu_sddmm) unless one of them has 2^31 elements or more. Undefined tensors are skipped.
    void fit_indexing(std::initializer_list<const Tensor *> tensors);

    std::string str() const;
};

class SddmmKernel {
public:
    explicit SddmmKernel(const SddmmKernelKey &key);
    static std::shared_ptr<const SddmmKernel> get(const SddmmKernelKey &key,
                                                  KernelCache &cache = KernelCache::global());

    /// Runs on g; out has num_edges rows in edge-id order. Throws ShapeError on mismatched tensors.
    /// CUDA kernels take tensors holding device pointers and run on the launch's context and stream.
    void run(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, const CudaLaunch &launch = {}) const;

    /// Runs on a graph over caller arrays (its COO in edge-id order); KernelError for schedules that
    /// group edges by destination (they need the graph's edges reordered first).
    void run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, const CudaLaunch &launch = {}) const;

    /// Builds on the host the edge order the kernel runs in on g (the destination order and its
    /// source tiles, kept by the graph), which a first run would otherwise build before its launch.
    /// Thread-safe; the tuner calls it while other candidates are measured.
    void prepare(const Graph &g) const;
    /// Builds the arrays of g that run() reads on the kernel's device (prepare(), then on a GPU the
    /// device copies of the edge order), which a first run on g would otherwise build before its
    /// launch. Kept with g; on the CPU the same as prepare().
    void upload(const Graph &g, const CudaLaunch &launch = {}) const;

    const SddmmKernelKey &key() const { return key_; }
    std::string lowered_stmt() const;

private:
    /// A run on g of the kernel from the persistent cache: the graph's COO (its device copy on a
    /// GPU) as a view, so a later process loads the kernel instead of compiling it.
    void run_library(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, const CudaLaunch &launch) const;
    void run_cpu(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out) const;
    void run_cuda(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, const CudaLaunch &launch) const;

    /// JIT-compiles the pipeline (once; runs on graph views of a cached kernel never need it).
    void compile_jit() const;

    SddmmKernelKey key_;
    mutable SddmmAlgorithm algo_;
    mutable Halide::Pipeline pipeline_;
    Halide::Target target_;
    std::shared_ptr<const KernelLibrary> library_;  ///< from the persistent kernel cache (view runs)
    mutable std::once_flag jit_once_;
};

}  // namespace gsparse
