#include "runtime/spmm_segment_kernel.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "runtime/view_call.h"
#include "schedules/spmm_segments.h"

namespace gsparse {

std::string SpmmSegmentKernelKey::str() const {
    return std::string("spmm_segments/") + spec.name() + "/" + layout.key() + "/" + dtype_name(dtype) + "/run=" +
           std::to_string(point.run) + (point.tile != kSegmentTileDefault ? "/tile=" + std::to_string(point.tile) : "") +
           (point.lanes != 0 ? "/lanes=" + std::to_string(point.lanes) : "") + "/" + device_name(device);
}

namespace {

SpmmSegmentAlgorithm scheduled(const SpmmSegmentKernelKey &key) {
    SpmmSegmentAlgorithm a = build_spmm_segment_algorithm(key.spec, key.layout, key.dtype,
                                                          key.point.lanes != 0 ? static_cast<int>(key.point.run) : 0);
    schedule_spmm_segments(a, key.device, key.point);
    return a;
}

}  // namespace

SpmmSegmentKernel::SpmmSegmentKernel(const SpmmSegmentKernelKey &key)
    : key_(key), algo_(scheduled(key)),
      compiled_(algo_.out, algo_.lowering_passes, algo_.arguments(), key.device, key.str()) {}

std::shared_ptr<const SpmmSegmentKernel> SpmmSegmentKernel::get(const SpmmSegmentKernelKey &key, KernelCache &cache) {
    return cache.get<SpmmSegmentKernel>(key.str(), [&] { return std::make_shared<const SpmmSegmentKernel>(key); });
}

std::string SpmmSegmentKernel::lowered_stmt() const { return compiled_.lowered_stmt(); }

void SpmmSegmentKernel::run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                            const CudaLaunch &launch) const {
    g.check_coo();
    check_view_run(g, key_.device, key_.dtype, out, g.num_dst, " (the destination nodes)", {&lhs, &rhs, &out});
    if (g.num_dst == 0) return;
    if (g.num_edges == 0 && key_.device == Device::CPU) {
        std::memset(out.data(), 0, out.nbytes());
        return;
    }
    if (g.num_edges == 0 && key_.point.lanes != 0) {
        // The lane form reads the last edge for positions past it; without edges the thread form
        // (no edge read) fills the zeros.
        SpmmSegmentKernelKey threads = key_;
        threads.point.lanes = 0;
        get(threads)->run(g, lhs, rhs, out, launch);
        return;
    }
    if (key_.point.lanes != 0) {
        // Positions run to the end of the last chunk of 32 x run edges, in int32.
        const int64_t chunk = kSegmentChunkLanes * key_.point.run;
        if (g.num_edges > std::numeric_limits<int32_t>::max() - chunk)
            fail<ShapeError>("g-SpMM by nonzeros on warp lanes takes graphs of at most ",
                             std::numeric_limits<int32_t>::max() - chunk, " edges, not ", g.num_edges,
                             "; use lanes = 0");
    }
    ViewCall call(key_.device, compiled_.target(), launch, compiled_.library());
    call.index(algo_.src_idx, g.coo_src, g.coo_len);
    call.index(algo_.dst_idx, g.coo_dst, g.coo_len);
    if (algo_.reads_row_ptr()) call.index(algo_.row_ptr, g.row_ptr, g.row_ptr_len);
    call.scalar(algo_.num_edges, static_cast<int32_t>(g.num_edges));
    call.scalar(algo_.num_src, static_cast<int32_t>(std::max<int64_t>(g.num_src, 1)));
    call.scalar(algo_.num_dst, static_cast<int32_t>(g.num_dst));
    if (algo_.uses_lhs()) call.features(algo_.lhs, lhs, key_.layout.lhs_extents());
    if (algo_.uses_rhs()) call.features(algo_.rhs, rhs, key_.layout.rhs_extents());
    call.output(out, key_.layout.extents, "out");
    call.run(compiled_.pipeline(), key_.str() + " on a graph view");
}

}  // namespace gsparse
