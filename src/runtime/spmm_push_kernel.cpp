#include "runtime/spmm_push_kernel.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "runtime/view_call.h"
#include "schedules/spmm_push.h"

namespace gsparse {

std::string SpmmPushKernelKey::str() const {
    return std::string("spmm_push/") + spec.name() + "/" + layout.key() + "/" + dtype_name(dtype) +
           (identity_edge_ids ? "/eid=pos" : "/eid=map") + "/" + device_name(device);
}

namespace {

SpmmPushAlgorithm scheduled(const SpmmPushKernelKey &key) {
    SpmmPushAlgorithm a = build_spmm_push_algorithm(key.spec, key.layout, key.dtype, key.identity_edge_ids);
    schedule_spmm_push(a, key.device);
    return a;
}

}  // namespace

SpmmPushKernel::SpmmPushKernel(const SpmmPushKernelKey &key)
    : key_(key), algo_(scheduled(key)),
      compiled_(algo_.out, algo_.lowering_passes, algo_.arguments(), key.device, key.str()) {}

std::shared_ptr<const SpmmPushKernel> SpmmPushKernel::get(const SpmmPushKernelKey &key, KernelCache &cache) {
    return cache.get<SpmmPushKernel>(key.str(), [&] { return std::make_shared<const SpmmPushKernel>(key); });
}

std::string SpmmPushKernel::lowered_stmt() const { return compiled_.lowered_stmt(); }

void SpmmPushKernel::run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                         const CudaLaunch &launch) const {
    if (algo_.reads_edge_ids && g.identity_edge_ids())
        fail<KernelError>("kernel ", key_.str(), " reads edge ids but the graph view has none");
    if (!algo_.reads_edge_ids && algo_.uses_rhs() && !g.identity_edge_ids())
        fail<KernelError>("kernel ", key_.str(), " is compiled for identity edge ids but the graph view maps them");
    check_view_run(g, key_.device, key_.dtype, out, g.num_src, " (the source nodes)", {&lhs, &rhs, &out});
    if (g.num_src == 0) return;
    if (g.num_edges == 0 && key_.device == Device::CPU) {
        std::memset(out.data(), 0, out.nbytes());
        return;
    }
    ViewCall call(key_.device, compiled_.target(), launch, compiled_.library());
    call.index(algo_.row_ptr, g.row_ptr, g.row_ptr_len);
    call.index(algo_.col_idx, g.col_idx, g.num_edges);
    if (algo_.reads_edge_ids) call.index(algo_.edge_ids, g.edge_ids, g.num_edges);
    call.scalar(algo_.max_degree, static_cast<int32_t>(std::max<int64_t>(g.degree_bound(), 1)));
    call.scalar(algo_.num_edges, static_cast<int32_t>(std::max<int64_t>(g.num_edges, 1)));
    call.scalar(algo_.num_src, static_cast<int32_t>(g.num_src));
    call.scalar(algo_.num_dst, static_cast<int32_t>(g.num_dst));
    if (algo_.uses_lhs()) call.features(algo_.lhs, lhs, key_.layout.lhs_extents());
    if (algo_.uses_rhs()) call.features(algo_.rhs, rhs, key_.layout.rhs_extents());
    call.output(out, key_.layout.extents, "out");
    call.run(compiled_.pipeline(), key_.str() + " on a graph view");
}

}  // namespace gsparse
