// A compiled g-SpMM-by-nonzeros kernel (ops/spmm_segment_algorithm.h): the algorithm for one (op,
// reduce, layout, dtype, run length, feature tile), scheduled by schedules/spmm_segments.h and compiled for one
// target, callable on any graph view with its COO. Like the other graph-view kernels, it comes from
// the persistent kernel cache when that is on.
#pragma once

#include <Halide.h>

#include <memory>
#include <string>

#include "core/tensor.h"
#include "graph/graph_view.h"
#include "ops/spmm_segment_algorithm.h"
#include "runtime/cuda_launch.h"
#include "runtime/kernel_cache.h"
#include "runtime/compiled_pipeline.h"
#include "schedules/spmm_segments.h"

namespace gsparse {

struct SpmmSegmentKernelKey {
    SpmmSpec spec;
    FeatureLayout layout;
    DType dtype = DType::F32;
    SegmentPoint point;  ///< run length and feature tile (schedules/spmm_segments.h)
    Device device = Device::CPU;

    std::string str() const;
};

class SpmmSegmentKernel {
public:
    explicit SpmmSegmentKernel(const SpmmSegmentKernelKey &key);
    static std::shared_ptr<const SpmmSegmentKernel> get(const SpmmSegmentKernelKey &key,
                                                        KernelCache &cache = KernelCache::global());

    /// out [num_dst, ...] = g-SpMM of lhs [num_src, ...] and rhs [num_edges, ...] on g, whose COO
    /// must be set (ShapeError when a tensor does not fit the key's layout, rows or device).
    void run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, const CudaLaunch &launch = {}) const;

    const SpmmSegmentKernelKey &key() const { return key_; }
    /// The lowered statement of the scheduled pipeline (with the PTX of CUDA kernels).
    std::string lowered_stmt() const;

private:
    SpmmSegmentKernelKey key_;
    mutable SpmmSegmentAlgorithm algo_;
    CompiledPipeline compiled_;
};

}  // namespace gsparse
