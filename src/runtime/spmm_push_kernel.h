// A compiled transposed (push) g-SpMM kernel (ops/spmm_push_algorithm.h): the algorithm for one
// (op, reduce, layout, dtype, index layout), scheduled by schedules/spmm_push.h and compiled for
// one target, callable on any graph view whose tensors fit it. Like the graph-view g-SpMM
// kernels, it comes from the persistent kernel cache when that is on.
#pragma once

#include <Halide.h>

#include <memory>
#include <string>

#include "core/tensor.h"
#include "graph/graph_view.h"
#include "ops/spmm_push_algorithm.h"
#include "runtime/cuda_launch.h"
#include "runtime/kernel_cache.h"
#include "runtime/compiled_pipeline.h"

namespace gsparse {

struct SpmmPushKernelKey {
    SpmmSpec spec;
    FeatureLayout layout;
    DType dtype = DType::F32;
    bool identity_edge_ids = true;
    Device device = Device::CPU;

    std::string str() const;
};

class SpmmPushKernel {
public:
    explicit SpmmPushKernel(const SpmmPushKernelKey &key);
    static std::shared_ptr<const SpmmPushKernel> get(const SpmmPushKernelKey &key,
                                                     KernelCache &cache = KernelCache::global());

    /// out [num_src, ...] = the transposed g-SpMM of lhs [num_dst, ...] and rhs [num_edges, ...] on
    /// g (ShapeError when a tensor does not fit the key's layout, rows or device).
    void run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, const CudaLaunch &launch = {}) const;

    const SpmmPushKernelKey &key() const { return key_; }
    /// The lowered statement of the scheduled pipeline (for inspection and IR tests).
    std::string lowered_stmt() const;

private:
    SpmmPushKernelKey key_;
    mutable SpmmPushAlgorithm algo_;
    CompiledPipeline compiled_;
};

}  // namespace gsparse
