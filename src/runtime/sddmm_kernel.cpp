#include "runtime/sddmm_kernel.h"

#include <algorithm>

#include "core/error.h"
#include "runtime/device_graph.h"
#include "runtime/halide_buffers.h"
#include "runtime/lowered_stmt.h"
#include "runtime/target.h"
#include "runtime/view_call.h"
#include "schedules/schedule.h"

namespace gsparse {

std::string SddmmKernelKey::str() const {
    // The op and both targets: copy_lhs on u and copy_rhs on u share the DGL name copy_u.
    return std::string("sddmm/") + binary_op_name(spec.op) + "_" + target_name(spec.lhs) + "_" +
           target_name(spec.rhs) + "/" + layout.key() + "/" + dtype_name(dtype) + "/" +
           schedule.str() + "/" + device_name(device) +
           (large_buffers ? "" : "/i32");
}

void SddmmKernelKey::fit_indexing(std::initializer_list<const Tensor *> tensors) {
    large_buffers = false;
    for (const Tensor *t : tensors)
        if (t && t->defined() && needs_large_buffers(t->numel())) large_buffers = true;
}

SddmmKernel::SddmmKernel(const SddmmKernelKey &key) : key_(key) {
    const SddmmScheduleDef &def = sddmm_schedule(key.schedule.schedule);
    if (def.device != key.device)
        fail<ScheduleError>("schedule ", def.name, " is for ", device_name(def.device), ", not ",
                            device_name(key.device));
    Problem problem = sddmm_problem(key.layout, {}, key.dtype);
    check_schedule(def, key.schedule, problem);
    algo_ = build_sddmm_algorithm(key.spec, key.layout, key.dtype);
    algo_.large_buffers = key.large_buffers;
    def.apply(algo_, key.schedule);
    pipeline_ = Halide::Pipeline(algo_.out);
    for (const auto &pass : algo_.lowering_passes) pipeline_.add_custom_lowering_pass(pass.get(), nullptr);
    target_ = jit_target(key.device, key.large_buffers);
    // Kernels that can run on graph views (edge-id order) come from the persistent kernel cache when
    // it is on; the others, and all of them when it is off or cannot link, are JIT-compiled here.
    if (!algo_.edges_grouped) library_ = KernelLibrary::get(pipeline_, algo_.arguments(), target_, key.str());
    if (!library_) compile_jit();
}

void SddmmKernel::compile_jit() const {
    // Feature-chunked schedules keep a per-edge accumulator on the device, reused across calls.
    std::call_once(jit_once_, [&] { jit_compile(pipeline_, target_, key_.device, key_.str()); });
}

std::shared_ptr<const SddmmKernel> SddmmKernel::get(const SddmmKernelKey &key, KernelCache &cache) {
    return cache.get<SddmmKernel>(key.str(), [&] { return std::make_shared<const SddmmKernel>(key); });
}

std::string SddmmKernel::lowered_stmt() const { return lowered_stmt_text(pipeline_, algo_.arguments(), target_); }

void SddmmKernel::run(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                      const CudaLaunch &launch) const {
    const int64_t edges = g.num_edges();
    if (out.dim() < 1 || out.size(0) != edges)
        fail<ShapeError>("output ", out.str(), " must have ", edges, " rows (one per edge)");
    if (out.dtype() != key_.dtype) fail<ShapeError>("output dtype ", dtype_name(out.dtype()), " != kernel dtype");
    for (const Tensor *t : std::initializer_list<const Tensor *>{algo_.uses_lhs() ? &lhs : nullptr,
                                                                  algo_.uses_rhs() ? &rhs : nullptr, &out})
        if (t && t->defined() && t->data() && t->device() != key_.device)
            fail<ShapeError>("tensor ", t->str(), " is on ", device_name(t->device()), " but the kernel runs on ",
                             device_name(key_.device));
    if (edges == 0) return;
    // A kernel from the persistent cache runs on the graph's COO (its device copy on a GPU) as on a
    // view; edges grouped by destination (no library) and every kernel with the cache off through
    // the JIT-compiled pipeline.
    if (library_) {
        run_library(g, lhs, rhs, out, launch);
        return;
    }
    compile_jit();
    if (key_.device == Device::CUDA) run_cuda(g, lhs, rhs, out, launch);
    else run_cpu(g, lhs, rhs, out);
}

void SddmmKernel::run_library(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                              const CudaLaunch &launch) const {
    GraphView v;
    v.device = key_.device;
    v.num_src = g.num_src();
    v.num_dst = g.num_dst();
    v.num_edges = g.num_edges();
    if (key_.device == Device::CUDA) {
        // The COO in edge-id order, padded to whole edge tiles (at least what a view needs).
        auto dev = DeviceCoo::get(g, algo_.edges_grouped, algo_.src_tile, launch, target_);
        v.coo_src = device_index_ptr(dev->src);
        v.coo_dst = device_index_ptr(dev->dst);
        v.coo_len = dev->src.dim(0).extent();
    } else {
        const COO &coo = g.coo();
        v.coo_src = coo.col.data();
        v.coo_dst = coo.row.data();
        v.coo_len = coo.nnz();
    }
    run(v, lhs, rhs, out, launch);
}

void SddmmKernel::run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                      const CudaLaunch &launch) const {
    if (algo_.edges_grouped)
        fail<KernelError>("schedule ", key_.schedule.str(),
                          " groups edges by destination and cannot run on a graph view; use edge-id order");
    const int64_t edges = g.num_edges;
    check_view_run(g, key_.device, key_.dtype, out, edges, " (one per edge)",
                   {algo_.uses_lhs() ? &lhs : nullptr, algo_.uses_rhs() ? &rhs : nullptr, &out});
    if (edges == 0) return;
    g.check_coo();
    ViewCall call(key_.device, target_, launch, library_.get());
    if (algo_.reads_src()) call.index(algo_.src_idx, g.coo_src, g.coo_len);
    if (algo_.reads_dst()) call.index(algo_.dst_idx, g.coo_dst, g.coo_len);
    if (algo_.uses_lhs()) {
        check_operand_alignment(lhs, algo_.operand_alignment, "lhs", key_.schedule.str());
        call.features(algo_.lhs, lhs, key_.layout.lhs_extents());
    }
    if (algo_.uses_rhs()) {
        check_operand_alignment(rhs, algo_.operand_alignment, "rhs", key_.schedule.str());
        call.features(algo_.rhs, rhs, key_.layout.rhs_extents());
    }
    call.scalar(algo_.num_edges, static_cast<int32_t>(edges));
    call.scalar(algo_.num_src, static_cast<int32_t>(std::max<int64_t>(g.num_src, 1)));
    call.scalar(algo_.num_dst, static_cast<int32_t>(std::max<int64_t>(g.num_dst, 1)));
    call.output(out, key_.layout.extents, "out");
    call.run(pipeline_, key_.str() + " on a graph view");
}

void SddmmKernel::prepare(const Graph &g) const {
    if (algo_.edges_grouped) g.coo_by_dst(algo_.src_tile);
}

void SddmmKernel::upload(const Graph &g, const CudaLaunch &launch) const {
    prepare(g);
    if (key_.device == Device::CUDA && g.num_edges() > 0)
        DeviceCoo::get(g, algo_.edges_grouped, algo_.src_tile, launch, target_);
}

void SddmmKernel::run_cpu(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out) const {
    const COO &coo = algo_.edges_grouped ? g.coo_by_dst(algo_.src_tile) : g.coo();
    Halide::ParamMap params;
    if (algo_.reads_src()) params.set(algo_.src_idx, index_buffer(coo.col, "src_idx"));
    if (algo_.reads_dst()) params.set(algo_.dst_idx, index_buffer(coo.row, "dst_idx"));
    if (algo_.edges_grouped) params.set(algo_.edge_of, index_buffer(coo.edge_ids, "edge_of"));
    if (algo_.uses_lhs()) params.set(algo_.lhs, feature_buffer(lhs, key_.layout.lhs_extents(), "lhs"));
    if (algo_.uses_rhs()) params.set(algo_.rhs, feature_buffer(rhs, key_.layout.rhs_extents(), "rhs"));
    params.set(algo_.num_edges, static_cast<int32_t>(coo.nnz()));
    params.set(algo_.num_src, static_cast<int32_t>(coo.num_cols));
    params.set(algo_.num_dst, static_cast<int32_t>(coo.num_rows));
    Halide::Buffer<> out_buf = feature_buffer(out, key_.layout.extents, "out");
    try {
        pipeline_.realize(out_buf, target_, params);
    } catch (const Halide::Error &e) {
        fail<KernelError>("running ", key_.str(), " failed: ", e.what());
    }
}

void SddmmKernel::run_cuda(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                           const CudaLaunch &launch) const {
    auto dev = DeviceCoo::get(g, algo_.edges_grouped, algo_.src_tile, launch, target_);
    Halide::ParamMap params;
    if (algo_.reads_src()) params.set(algo_.src_idx, dev->src);
    if (algo_.reads_dst()) params.set(algo_.dst_idx, dev->dst);
    if (algo_.edges_grouped) params.set(algo_.edge_of, dev->edge_of);
    auto wrap = [&](const Tensor &t, const std::vector<int64_t> &extents, const char *name) {
        return wrap_device_buffer(halide_type(t.dtype()), t.data(), halide_sizes(extents, t.size(0)), target_, name);
    };
    std::vector<Halide::Buffer<>> wrapped;
    if (algo_.uses_lhs()) {
        check_operand_alignment(lhs, algo_.operand_alignment, "lhs", key_.schedule.str());
        wrapped.push_back(wrap(lhs, key_.layout.lhs_extents(), "lhs"));
        params.set(algo_.lhs, wrapped.back());
    }
    if (algo_.uses_rhs()) {
        check_operand_alignment(rhs, algo_.operand_alignment, "rhs", key_.schedule.str());
        wrapped.push_back(wrap(rhs, key_.layout.rhs_extents(), "rhs"));
        params.set(algo_.rhs, wrapped.back());
    }
    // The counts come from the graph: the host COO of the other edge order is never built here.
    params.set(algo_.num_edges, static_cast<int32_t>(g.num_edges()));
    params.set(algo_.num_src, static_cast<int32_t>(std::max<int64_t>(g.num_src(), 1)));
    params.set(algo_.num_dst, static_cast<int32_t>(std::max<int64_t>(g.num_dst(), 1)));
    wrapped.push_back(wrap(out, key_.layout.extents, "out"));
    CudaJITContext ctx(launch);
    try {
        pipeline_.realize(&ctx, wrapped.back(), target_, params);
    } catch (const Halide::Error &e) {
        fail<KernelError>("running ", key_.str(), " on the GPU failed: ", e.what());
    }
    // The wrappers only borrow the caller's memory.
    for (auto &b : wrapped) b.get()->device_detach_native(&ctx);
}

}  // namespace gsparse
