#include "runtime/graph_build_kernels.h"

#include <algorithm>

#include "core/error.h"
#include "graph/graph_view.h"
#include "runtime/view_call.h"
#include "schedules/graph_build.h"

namespace gsparse {

namespace {

constexpr int64_t kEdgesPerThread = 16;
constexpr int64_t kMaxParts = int64_t{1} << 20;
/// Partial statistics a thread of a combining pass folds together.
constexpr int64_t kCombineFanIn = 64;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The halvings a binary search over n entries takes: n's bit length.
int32_t halvings(int64_t n) {
    int32_t steps = 0;
    for (; n > 0; n >>= 1) steps++;
    return steps;
}

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

GraphBuildKernels::GraphBuildKernels(DType index, Device device) : index_(index), device_(device) {
    check_index_dtype(index, "graph-build kernels");
    stats_.algo = scheduled(build_coo_stats_algorithm(index), device, &schedule_coo_stats);
    combine_.algo = scheduled(build_stats_combine_algorithm(), device, &schedule_stats_combine);
    rows_.algo = scheduled(build_row_offsets_algorithm(index), device, &schedule_row_offsets);
    narrow_.algo = scheduled(build_narrow_index_algorithm(index), device, &schedule_narrow_index);
    pair_.algo = scheduled(build_narrow_pair_algorithm(index), device, &schedule_narrow_pair);
    loop_rows_.algo = scheduled(build_loop_row_ptr_algorithm(), device, &schedule_loop_row_ptr);
    loop_coo_.algo = scheduled(build_loop_coo_algorithm(), device, &schedule_loop_coo);
    loop_append_.algo = scheduled(build_loop_coo_append_algorithm(), device, &schedule_loop_coo_append);
    loop_degrees_.algo = scheduled(build_loop_degrees_algorithm(), device, &schedule_loop_degrees);
    gcn_weights_.algo = scheduled(build_gcn_weights_algorithm(), device, &schedule_gcn_weights);
}

template <typename A>
const CompiledPipeline &GraphBuildKernels::compiled(Stage<A> &stage) const {
    std::call_once(stage.once, [&] {
        stage.compiled = std::make_unique<CompiledPipeline>(stage.algo.out, stage.algo.lowering_passes,
                                                            stage.algo.arguments(), device_, key(stage));
    });
    return *stage.compiled;
}

template <typename A>
std::string GraphBuildKernels::key(const Stage<A> &stage) const {
    return std::string("graph_build/") + stage.name + (stage.typed ? std::string("/") + dtype_name(index_) : "") +
           "/" + device_name(device_);
}

std::shared_ptr<const GraphBuildKernels> GraphBuildKernels::get(DType index, Device device, KernelCache &cache) {
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
        const CompiledPipeline &c = compiled(stats_);
        const CooStatsAlgorithm &a = stats_.algo;
        Tensor out = stats_tensor(areas[0], parts, device_);
        ViewCall call(device_, c.target(), launch, c.library());
        call.features(a.src, src, {});
        call.features(a.dst, dst, {});
        call.scalar(a.num_edges, E);
        call.scalar(a.parts, static_cast<int32_t>(parts));
        call.output(out, {kCooStatCount}, "coo_stats");
        call.run(c.pipeline(), key(stats_));
    }
    int area = 0;
    while (parts > kHostPartials) {
        const int64_t next = ceil_div(parts, kCombineFanIn);
        const CompiledPipeline &c = compiled(combine_);
        const StatsCombineAlgorithm &a = combine_.algo;
        Tensor in = stats_tensor(areas[area], parts, device_), out = stats_tensor(areas[1 - area], next, device_);
        ViewCall call(device_, c.target(), launch, c.library());
        call.features(a.in, in, {kCooStatCount});
        call.scalar(a.count, static_cast<int32_t>(parts));
        call.scalar(a.parts, static_cast<int32_t>(next));
        call.output(out, {kCooStatCount}, "stats_combine");
        call.run(c.pipeline(), key(combine_));
        parts = next;
        area = 1 - area;
    }
    return {areas[area], parts};
}

void GraphBuildKernels::row_offsets(const Tensor &dst, int64_t num_edges, index_t *row_ptr, int64_t rows,
                                    const CudaLaunch &launch) const {
    const int32_t E = as_int32(num_edges, "num_edges");
    const CompiledPipeline &c = compiled(rows_);
    const RowOffsetsAlgorithm &a = rows_.algo;
    Tensor out = Tensor::wrap(row_ptr, {rows}, DType::I32, device_);
    ViewCall call(device_, c.target(), launch, c.library());
    call.features(a.dst, dst, {});
    call.scalar(a.num_edges, E);
    call.scalar(a.steps, halvings(E));
    call.output(out, {}, "row_ptr");
    call.run(c.pipeline(), key(rows_));
}

void GraphBuildKernels::narrow(const Tensor &in, int64_t count, index_t *out, int64_t len,
                               const CudaLaunch &launch) const {
    const int32_t n = as_int32(count, "count");
    if (len < count) fail<ShapeError>("the narrowed array has ", len, " entries for ", count, " ids");
    const CompiledPipeline &c = compiled(narrow_);
    Tensor o = Tensor::wrap(out, {len}, DType::I32, device_);
    ViewCall call(device_, c.target(), launch, c.library());
    call.features(narrow_.algo.in, in, {});
    call.scalar(narrow_.algo.count, n);
    call.output(o, {}, "narrowed");
    call.run(c.pipeline(), key(narrow_));
}

void GraphBuildKernels::narrow_pair(const Tensor &a, const Tensor &b, int64_t count, index_t *out_a, index_t *out_b,
                                    int64_t len, const CudaLaunch &launch) const {
    const int32_t n = as_int32(count, "count");
    if (len < count) fail<ShapeError>("the narrowed arrays have ", len, " entries for ", count, " ids");
    const CompiledPipeline &c = compiled(pair_);
    Tensor oa = Tensor::wrap(out_a, {len}, DType::I32, device_), ob = Tensor::wrap(out_b, {len}, DType::I32, device_);
    ViewCall call(device_, c.target(), launch, c.library());
    call.features(pair_.algo.a, a, {});
    call.features(pair_.algo.b, b, {});
    call.scalar(pair_.algo.count, n);
    call.output(oa, {}, "narrowed_a");
    call.output(ob, {}, "narrowed_b");
    call.run(c.pipeline(), key(pair_));
}

void GraphBuildKernels::append_self_loops(const index_t *row_ptr, int64_t rows, const index_t *col_idx,
                                          int64_t num_dst, int64_t num_edges, int64_t loops, index_t *out_row_ptr,
                                          int64_t out_rows, index_t *coo_src, index_t *coo_dst, uint8_t *own_loops,
                                          int64_t coo_len, const CudaLaunch &launch) const {
    const int32_t E = as_int32(num_edges, "num_edges"), N = as_int32(num_dst, "num_dst"), n = as_int32(loops, "loops");
    as_int32(num_edges + loops, "num_edges + loops");
    if (rows <= num_dst || out_rows <= num_dst)
        fail<ShapeError>("the row offsets have ", std::min(rows, out_rows), " entries for ", num_dst, " rows");
    if (loops > num_dst) fail<ShapeError>(loops, " self-loops for ", num_dst, " rows");
    if (coo_len < num_edges + loops)
        fail<ShapeError>("the self-loop graph's COO arrays have ", coo_len, " entries for ", num_edges + loops, " edges");
    const Tensor in_rows = Tensor::wrap(const_cast<index_t *>(row_ptr), {rows}, DType::I32, device_);
    {
        const CompiledPipeline &c = compiled(loop_rows_);
        Tensor out = Tensor::wrap(out_row_ptr, {out_rows}, DType::I32, device_);
        ViewCall call(device_, c.target(), launch, c.library());
        call.features(loop_rows_.algo.row_ptr, in_rows, {});
        call.scalar(loop_rows_.algo.num_dst, N);
        call.scalar(loop_rows_.algo.loops, n);
        call.output(out, {}, "row_ptr");
        call.run(c.pipeline(), key(loop_rows_));
    }
    const CompiledPipeline &c = compiled(loop_coo_);
    const LoopCooAlgorithm &a = loop_coo_.algo;
    Tensor cols = Tensor::wrap(const_cast<index_t *>(col_idx), {std::max<int64_t>(E, 1)}, DType::I32, device_);
    Tensor os = Tensor::wrap(coo_src, {coo_len}, DType::I32, device_), od = Tensor::wrap(coo_dst, {coo_len}, DType::I32, device_);
    Tensor ol = Tensor::wrap(own_loops, {coo_len}, DType::Bool, device_);
    ViewCall call(device_, c.target(), launch, c.library());
    call.features(a.row_ptr, in_rows, {});
    call.features(a.col_idx, cols, {});
    call.scalar(a.num_edges, E);
    call.scalar(a.num_dst, N);
    call.scalar(a.loops, n);
    call.scalar(a.steps, halvings(N));
    call.output(os, {}, "coo_src");
    call.output(od, {}, "coo_dst");
    call.output(ol, {}, "own_loops");
    call.run(c.pipeline(), key(loop_coo_));
}

void GraphBuildKernels::append_self_loops_to_coo(const index_t *src, const index_t *dst, int64_t num_edges,
                                                 int64_t loops, index_t *coo_src, index_t *coo_dst, uint8_t *own_loops,
                                                 int64_t coo_len, const CudaLaunch &launch) const {
    const int32_t E = as_int32(num_edges, "num_edges"), n = as_int32(loops, "loops");
    as_int32(num_edges + loops, "num_edges + loops");
    if (coo_len < num_edges + loops)
        fail<ShapeError>("the self-loop graph's COO arrays have ", coo_len, " entries for ", num_edges + loops, " edges");
    const int64_t in_len = std::max<int64_t>(E, 1);
    const CompiledPipeline &c = compiled(loop_append_);
    const LoopCooAppendAlgorithm &a = loop_append_.algo;
    ViewCall call(device_, c.target(), launch, c.library());
    call.features(a.src, Tensor::wrap(const_cast<index_t *>(src), {in_len}, DType::I32, device_), {});
    call.features(a.dst, Tensor::wrap(const_cast<index_t *>(dst), {in_len}, DType::I32, device_), {});
    call.scalar(a.num_edges, E);
    call.scalar(a.loops, n);
    call.output(Tensor::wrap(coo_src, {coo_len}, DType::I32, device_), {}, "coo_src");
    call.output(Tensor::wrap(coo_dst, {coo_len}, DType::I32, device_), {}, "coo_dst");
    call.output(Tensor::wrap(own_loops, {coo_len}, DType::Bool, device_), {}, "own_loops");
    call.run(c.pipeline(), key(loop_append_));
}

void GraphBuildKernels::gcn_weights(const index_t *src, const index_t *dst, const uint8_t *own_loops,
                                    int64_t coo_len, int64_t num_edges, int64_t num_dst, int64_t loops, float fill,
                                    bool normalize, int32_t *degrees, float *weights, int64_t len,
                                    const CudaLaunch &launch) const {
    const int32_t E = as_int32(num_edges, "num_edges"), N = as_int32(num_dst, "num_dst"), n = as_int32(loops, "loops");
    if (E < 1 || N < 1) fail<ShapeError>("GCN's weights need at least one edge and one row");
    if (len < num_edges) fail<ShapeError>("the weights array has ", len, " entries for ", num_edges, " edges");
    if (coo_len < (device_ == Device::CUDA ? view_coo_length(num_edges) : num_edges))
        fail<ShapeError>("the COO arrays have ", coo_len, " entries for ", num_edges, " edges");
    Tensor s = Tensor::wrap(const_cast<index_t *>(src), {coo_len}, DType::I32, device_);
    Tensor d = Tensor::wrap(const_cast<index_t *>(dst), {coo_len}, DType::I32, device_);
    Tensor o = Tensor::wrap(const_cast<uint8_t *>(own_loops), {coo_len}, DType::Bool, device_);
    Tensor deg = Tensor::wrap(degrees, {N, 2}, DType::I32, device_);
    {
        const CompiledPipeline &c = compiled(loop_degrees_);
        const LoopDegreesAlgorithm &a = loop_degrees_.algo;
        ViewCall call(device_, c.target(), launch, c.library());
        call.features(a.src, s, {});
        call.features(a.dst, d, {});
        call.features(a.own, o, {});
        call.scalar(a.num_edges, E);
        call.scalar(a.num_dst, N);
        call.output(deg, {2}, "degrees");
        call.run(c.pipeline(), key(loop_degrees_));
    }
    const CompiledPipeline &c = compiled(gcn_weights_);
    const GcnWeightsAlgorithm &a = gcn_weights_.algo;
    ViewCall call(device_, c.target(), launch, c.library());
    call.features(a.src, s, {});
    call.features(a.dst, d, {});
    call.features(a.own, o, {});
    call.features(a.degrees, deg, {2});
    call.scalar(a.num_edges, E);
    call.scalar(a.num_dst, N);
    call.scalar(a.loops, n);
    call.scalar(a.normalize, normalize ? 1 : 0);
    call.scalar(a.fill, fill);
    call.output(Tensor::wrap(weights, {len}, DType::F32, device_), {}, "weights");
    call.run(c.pipeline(), key(gcn_weights_));
}

std::string GraphBuildKernels::lowered_stmts() const {
    return compiled(stats_).lowered_stmt() + compiled(combine_).lowered_stmt() +
           compiled(rows_).lowered_stmt() + compiled(narrow_).lowered_stmt() +
           compiled(pair_).lowered_stmt() + compiled(loop_rows_).lowered_stmt() +
           compiled(loop_coo_).lowered_stmt() + compiled(loop_append_).lowered_stmt() +
           compiled(loop_degrees_).lowered_stmt() + compiled(gcn_weights_).lowered_stmt();
}

}  // namespace gsparse
