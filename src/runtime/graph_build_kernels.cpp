#include "runtime/graph_build_kernels.h"

#include <algorithm>

#include "core/error.h"
#include "runtime/view_call.h"
#include "schedules/graph_build.h"

namespace gsparse {

namespace {

constexpr int64_t kEdgesPerThread = 16;
constexpr int64_t kMaxParts = int64_t{1} << 20;
/// Partial statistics a thread of a combining pass folds together.
constexpr int64_t kCombineFanIn = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename A>
A scheduled(A a, Device device, void (*schedule)(A &, Device)) {
    schedule(a, device);
    return a;
}

int32_t as_int32(int64_t v, const char *what) {
    if (v < 0 || v > INT32_MAX) fail<GraphError>(what, " = ", v, " is out of int32 range (gsparse uses int32 ids)");
    return static_cast<int32_t>(v);
}

Tensor stats_tensor(int64_t *data, int64_t parts, Device device) {
    return Tensor::wrap(data, {parts, kCooStatCount}, DType::I64, device);
}

}  // namespace

int64_t coo_stats_parts(int64_t num_edges) {
    return std::clamp<int64_t>(ceil_div(num_edges, kEdgesPerThread), 1, kMaxParts);
}

int64_t coo_stats_workspace_slots(int64_t num_edges) {
    const int64_t parts = coo_stats_parts(num_edges);
    return kCooStatCount * (parts + ceil_div(parts, kCombineFanIn));
}

GraphBuildKernels::GraphBuildKernels(DType index, Device device)
    : index_(index), device_(device),
      stats_(scheduled(build_coo_stats_algorithm(index), device, &schedule_coo_stats)),
      combine_(scheduled(build_stats_combine_algorithm(), device, &schedule_stats_combine)),
      rows_(scheduled(build_row_offsets_algorithm(index), device, &schedule_row_offsets)),
      narrow_(scheduled(build_narrow_index_algorithm(index), device, &schedule_narrow_index)),
      pair_(scheduled(build_narrow_pair_algorithm(index), device, &schedule_narrow_pair)),
      stats_compiled_(stats_.out, stats_.lowering_passes, stats_.arguments(), device, key("coo_stats")),
      combine_compiled_(combine_.out, combine_.lowering_passes, combine_.arguments(), device, key("stats_combine")),
      rows_compiled_(rows_.out, rows_.lowering_passes, rows_.arguments(), device, key("row_offsets")),
      narrow_compiled_(narrow_.out, narrow_.lowering_passes, narrow_.arguments(), device, key("narrow_index")),
      pair_compiled_(pair_.out, pair_.lowering_passes, pair_.arguments(), device, key("narrow_pair")) {}

std::string GraphBuildKernels::key(const char *pipeline) const {
    // The combining pass reads int64 statistics whatever the ids' type.
    const bool typed = std::string(pipeline) != "stats_combine";
    return std::string("graph_build/") + pipeline + (typed ? std::string("/") + dtype_name(index_) : "") + "/" +
           device_name(device_);
}

std::shared_ptr<const GraphBuildKernels> GraphBuildKernels::get(DType index, Device device, KernelCache &cache) {
    check_index_dtype(index, "graph-build kernels");
    const std::string key = std::string("graph_build/") + dtype_name(index) + "/" + device_name(device);
    return cache.get<GraphBuildKernels>(key, [&] { return std::make_shared<const GraphBuildKernels>(index, device); });
}

GraphBuildKernels::Partials GraphBuildKernels::coo_stats(const Tensor &src, const Tensor &dst, int64_t num_edges,
                                                         int64_t *workspace, const CudaLaunch &launch) const {
    const int32_t E = as_int32(num_edges, "num_edges");
    if (E == 0) fail<GraphError>("the statistics of a COO need at least one edge");
    int64_t parts = coo_stats_parts(E);
    int64_t *areas[2] = {workspace, workspace + kCooStatCount * parts};
    {
        Tensor out = stats_tensor(areas[0], parts, device_);
        ViewCall call(device_, stats_compiled_.target(), launch, stats_compiled_.library());
        call.features(stats_.src, src, {});
        call.features(stats_.dst, dst, {});
        call.scalar(stats_.num_edges, E);
        call.scalar(stats_.parts, static_cast<int32_t>(parts));
        call.output(out, {kCooStatCount}, "coo_stats");
        call.run(stats_compiled_.pipeline(), key("coo_stats"));
    }
    int area = 0;
    while (parts > kHostPartials) {
        const int64_t next = ceil_div(parts, kCombineFanIn);
        Tensor in = stats_tensor(areas[area], parts, device_), out = stats_tensor(areas[1 - area], next, device_);
        ViewCall call(device_, combine_compiled_.target(), launch, combine_compiled_.library());
        call.features(combine_.in, in, {kCooStatCount});
        call.scalar(combine_.count, static_cast<int32_t>(parts));
        call.scalar(combine_.parts, static_cast<int32_t>(next));
        call.output(out, {kCooStatCount}, "stats_combine");
        call.run(combine_compiled_.pipeline(), key("stats_combine"));
        parts = next;
        area = 1 - area;
    }
    return {areas[area], parts};
}

void GraphBuildKernels::row_offsets(const Tensor &dst, int64_t num_edges, index_t *row_ptr, int64_t rows,
                                    const CudaLaunch &launch) const {
    const int32_t E = as_int32(num_edges, "num_edges");
    int32_t steps = 0;
    for (int64_t e = E; e > 0; e >>= 1) steps++;
    Tensor out = Tensor::wrap(row_ptr, {rows}, DType::I32, device_);
    ViewCall call(device_, rows_compiled_.target(), launch, rows_compiled_.library());
    call.features(rows_.dst, dst, {});
    call.scalar(rows_.num_edges, E);
    call.scalar(rows_.steps, steps);
    call.output(out, {}, "row_ptr");
    call.run(rows_compiled_.pipeline(), key("row_offsets"));
}

void GraphBuildKernels::narrow(const Tensor &in, int64_t count, index_t *out, int64_t len,
                               const CudaLaunch &launch) const {
    const int32_t n = as_int32(count, "count");
    if (len < count) fail<ShapeError>("the narrowed array has ", len, " entries for ", count, " ids");
    Tensor o = Tensor::wrap(out, {len}, DType::I32, device_);
    ViewCall call(device_, narrow_compiled_.target(), launch, narrow_compiled_.library());
    call.features(narrow_.in, in, {});
    call.scalar(narrow_.count, n);
    call.output(o, {}, "narrowed");
    call.run(narrow_compiled_.pipeline(), key("narrow_index"));
}

void GraphBuildKernels::narrow_pair(const Tensor &a, const Tensor &b, int64_t count, index_t *out_a, index_t *out_b,
                                    int64_t len, const CudaLaunch &launch) const {
    const int32_t n = as_int32(count, "count");
    if (len < count) fail<ShapeError>("the narrowed arrays have ", len, " entries for ", count, " ids");
    Tensor oa = Tensor::wrap(out_a, {len}, DType::I32, device_), ob = Tensor::wrap(out_b, {len}, DType::I32, device_);
    ViewCall call(device_, pair_compiled_.target(), launch, pair_compiled_.library());
    call.features(pair_.a, a, {});
    call.features(pair_.b, b, {});
    call.scalar(pair_.count, n);
    call.output(oa, {}, "narrowed_a");
    call.output(ob, {}, "narrowed_b");
    call.run(pair_compiled_.pipeline(), key("narrow_pair"));
}

std::string GraphBuildKernels::lowered_stmts() const {
    return stats_compiled_.lowered_stmt() + combine_compiled_.lowered_stmt() + rows_compiled_.lowered_stmt() +
           narrow_compiled_.lowered_stmt() + pair_compiled_.lowered_stmt();
}

}  // namespace gsparse
