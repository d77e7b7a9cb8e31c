#include "schedules/spmm_push.h"

#include <algorithm>
#include <string>

#include "graph/graph_view.h"
#include "halide_ext/atomic_add_stores.h"
#include "schedules/scatter_threads.h"

namespace gsparse {

using namespace Halide;

void schedule_spmm_push(SpmmPushAlgorithm &a, Device device) {
    const int rank = a.layout.rank();
    for (int d = 0; d <= rank; d++) a.out.output_buffer().dim(d).set_min(0);
    a.row_ptr.dim(0).set_min(0);
    if (device != Device::CUDA) {
        // Serial loops: rows, their neighbours, then the features innermost.
        std::vector<VarOrRVar> order(a.f.begin(), a.f.end());
        order.push_back(a.r.x);
        order.push_back(a.r.y);
        a.out.update().reorder(order);
        return;
    }

    // The feature dimensions fused into one, in both stages.
    Var fz = fuse_feature_dims(a.out, a.f, "fz");
    Var all("all"), bo("bo"), bi("bi");
    a.out.fuse(fz, a.u, all).gpu_tile(all, bo, bi, 256, TailStrategy::GuardWithIf);

    Stage scatter = a.out.update();
    Var sz = fuse_feature_dims(scatter, a.f, "sz");
    // Rows a block: at most the row padding of graph views (kViewRowPad), so that the block's
    // last row reads row_ptr inside the padded array.
    const int T = scatter_feature_threads(a.layout.out_len());
    const int M = std::min<int>(256 / T, static_cast<int>(kViewRowPad));
    RVar k = a.r.x, v = a.r.y;
    RVar vo("vo"), vi("vi");
    Var fo("fo"), fi("fi");
    scatter.atomic()
        .split(sz, fo, fi, T, TailStrategy::GuardWithIf)
        .split(v, vo, vi, M, TailStrategy::GuardWithIf)
        .reorder(k, fi, vi, vo, fo)
        .gpu_threads(fi, vi)
        .gpu_blocks(vo, fo);
    a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
}

}  // namespace gsparse
