#include "runtime/spmm_kernel.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "halide_ext/bind_buffer.h"
#include "halide_ext/block_uniform_loop.h"
#include "runtime/device_graph.h"
#include "runtime/halide_buffers.h"
#include "runtime/lowered_stmt.h"
#include "runtime/target.h"
#include "runtime/view_call.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"

namespace gsparse {

std::string SpmmKernelKey::str() const {
    return std::string("spmm/") + spec.name() + "/" + layout.key() + "/" + dtype_name(dtype) +
           (identity_edge_ids ? "/eid=pos" : "/eid=map") + "/" + schedule.str() + "/" + device_name(device);
}

SpmmKernel::SpmmKernel(const SpmmKernelKey &key) : key_(key) {
    const SpmmScheduleDef &def = spmm_schedule(key.schedule.schedule);
    if (def.device != key.device)
        fail<ScheduleError>("schedule ", def.name, " is for ", device_name(def.device), ", not ",
                            device_name(key.device));
    Problem problem = spmm_problem(key.spec, key.layout, {}, key.dtype);
    check_schedule(def, key.schedule, problem);
    // Source-tiled rows reorder the edges, so edge ids are always read (never the position).
    // Relabeled graphs (rowBalance = 3) list their edges in the new row order with explicit ids too.
    const bool source_tiled = key.schedule.get_or("kSrcTile", 0) > 0;
    algo_ = build_spmm_algorithm(key.spec, key.layout, key.dtype,
                                 key.identity_edge_ids && !source_tiled && !runs_on_relabeled_graph(key.schedule));
    def.apply(algo_, key.schedule);
    pipeline_ = Halide::Pipeline(algo_.out);
    for (const auto &pass : algo_.lowering_passes) pipeline_.add_custom_lowering_pass(pass.get(), nullptr);
    target_ = jit_target(key.device);
    if (!algo_.large_buffers) target_ = target_.without_feature(Halide::Target::LargeBuffers);
    // Kernels that run on graph views come from the persistent kernel cache when it is on: a later
    // process loads them instead of compiling. The others (and all of them when the cache is off or
    // cannot link) are JIT-compiled here.
    if (runs_on_views())
        library_ = KernelLibrary::get(pipeline_, algo_.arguments(), target_, key.str(), [&] { check_lowering(); },
                                      algo_.max_registers);
    if (!library_) compile_jit();
}

void SpmmKernel::check_lowering() const {
    // A block-uniform bound that matched no loop would leave barriers in a loop to the graph's
    // longest row: treat it as a compiler error, not a slow kernel.
    for (const auto &pass : algo_.lowering_passes) {
        if (auto *uniform = dynamic_cast<const ext::BlockUniformLoop *>(pass.get()); uniform && uniform->rewritten() == 0)
            fail<KernelError>("compiling ", key_.str(), ": the block-uniform loop bound matched no loop");
        if (auto *bind = dynamic_cast<const ext::BindBufferStores *>(pass.get()); bind && bind->rewritten() == 0)
            fail<KernelError>("compiling ", key_.str(), ": bind_buffer found no output store to remap");
    }
}

void SpmmKernel::compile_jit() const {
    std::call_once(jit_once_, [&] {
        jit_compile(pipeline_, target_, key_.device, key_.str());
        check_lowering();
    });
}

std::shared_ptr<const SpmmKernel> SpmmKernel::get(const SpmmKernelKey &key, KernelCache &cache) {
    return cache.get<SpmmKernel>(key.str(), [&] { return std::make_shared<const SpmmKernel>(key); });
}

std::string SpmmKernel::lowered_stmt() const { return lowered_stmt_text(pipeline_, algo_.arguments(), target_); }

void SpmmKernel::run(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u, Tensor *arg_e,
                     const CudaLaunch &launch) const {
    const CSR &csr = g.csr();
    if (reads_edge_ids(key_.spec) && algo_.src_tile == 0 && !algo_.relabeled &&
        csr.identity_edge_ids() != key_.identity_edge_ids)
        fail<KernelError>("kernel compiled for ", key_.identity_edge_ids ? "identity" : "mapped",
                          " edge ids called on a graph with the other kind");
    const bool args = has_arg_outputs(key_.spec.reduce);
    if (args && (!arg_u || !arg_e)) fail<ShapeError>(key_.spec.name(), " needs arg_u and arg_e output tensors");
    if (out.dim() < 1 || out.size(0) != csr.num_rows)
        fail<ShapeError>("output ", out.str(), " must have ", csr.num_rows, " rows");
    if (out.dtype() != key_.dtype) fail<ShapeError>("output dtype ", dtype_name(out.dtype()), " != kernel dtype");
    for (const Tensor *t : std::initializer_list<const Tensor *>{&lhs, &rhs, &out, arg_u, arg_e})
        if (t && t->defined() && t->data() && t->device() != key_.device)
            fail<ShapeError>("tensor ", t->str(), " is on ", device_name(t->device()), " but the kernel runs on ",
                             device_name(key_.device));
    if (csr.num_rows == 0) return;
    // A kernel from the persistent cache runs on the graph's CSR (its device copy on a GPU) as on a
    // view; the others (and all of them with the cache off) through the JIT-compiled pipeline.
    if (library_) {
        run_library(g, lhs, rhs, out, arg_u, arg_e, launch);
        return;
    }
    compile_jit();
    if (key_.device == Device::CUDA) run_cuda(g, lhs, rhs, out, arg_u, arg_e, launch);
    else run_cpu(g, lhs, rhs, out, arg_u, arg_e);
}

void SpmmKernel::run_cpu(const Graph &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u,
                         Tensor *arg_e) const {
    const CSR &csr = g.csr();
    const bool args = has_arg_outputs(key_.spec.reduce);
    if (csr.nnz() == 0) {
        // No edges: every node is empty. Nothing to gather, so no kernel launch.
        std::memset(out.data(), 0, out.nbytes());
        if (args) {
            std::fill_n(arg_u->data_as<int32_t>(), arg_u->numel(), -1);
            std::fill_n(arg_e->data_as<int32_t>(), arg_e->numel(), -1);
        }
        return;
    }

    Halide::ParamMap params;
    if (algo_.src_tile > 0) {
        // Source-tile segments over the edges in source-tile order (both kept by the graph).
        const COO &tiled = g.coo_by_dst(algo_.src_tile);
        const RowSegments &segs = g.source_tile_segments(algo_.src_tile, algo_.segment_len);
        params.set(algo_.row_ptr, index_buffer(segs.seg_ptr, "seg_ptr"));
        params.set(algo_.col_idx, index_buffer(tiled.col, "col_idx"));
        if (algo_.reads_edge_ids) params.set(algo_.edge_ids, index_buffer(tiled.edge_ids, "edge_ids"));
        params.set(algo_.row_segs, index_buffer(segs.row_segs, "row_segs"));
        params.set(algo_.seg_ids, index_buffer(segs.seg_ids, "seg_ids"));
        params.set(algo_.num_segs, static_cast<int32_t>(segs.num_segs()));
        params.set(algo_.max_segments, segs.max_segments);
        params.set(algo_.max_degree, segs.max_segment_len);
        if (key_.spec.reduce == ReduceOp::Mean) params.set(algo_.row_degree_ptr, index_buffer(csr.row_ptr, "row_ptr"));
    } else {
        if (algo_.segment_len > 0 || algo_.tail_len > 0)
            fail<KernelError>("row-split kernels run on the GPU only: ", key_.str());
        params.set(algo_.row_ptr, index_buffer(csr.row_ptr, "row_ptr"));
        params.set(algo_.col_idx, index_buffer(csr.col_idx, "col_idx"));
        if (algo_.reads_edge_ids) params.set(algo_.edge_ids, index_buffer(csr.edge_ids, "edge_ids"));
        params.set(algo_.max_degree, static_cast<int32_t>(g.max_row_length()));
    }
    if (algo_.uses_lhs()) params.set(algo_.lhs, feature_buffer(lhs, key_.layout.lhs_extents(), "lhs"));
    if (algo_.uses_rhs()) params.set(algo_.rhs, feature_buffer(rhs, key_.layout.rhs_extents(), "rhs"));
    params.set(algo_.num_edges, static_cast<int32_t>(csr.nnz()));
    params.set(algo_.num_src, static_cast<int32_t>(csr.num_cols));

    Halide::Buffer<> out_buf = feature_buffer(out, key_.layout.extents, "out");
    try {
        if (args) {
            Halide::Buffer<> u_buf = feature_buffer(*arg_u, key_.layout.extents, "arg_u");
            Halide::Buffer<> e_buf = feature_buffer(*arg_e, key_.layout.extents, "arg_e");
            pipeline_.realize(Halide::Realization({out_buf, u_buf, e_buf}), target_, params);
        } else {
            pipeline_.realize(out_buf, target_, params);
        }
    } catch (const Halide::Error &e) {
        fail<KernelError>("running ", key_.str(), " failed: ", e.what());
    }
}

void SpmmKernel::run_cuda(const Graph &graph, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u,
                          Tensor *arg_e, const CudaLaunch &launch) const {
    Halide::ParamMap params;
    const CSR &csr = bind_graph_cuda(graph, launch, params).csr();
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
    params.set(algo_.num_edges, static_cast<int32_t>(std::max<int64_t>(csr.nnz(), 1)));
    params.set(algo_.num_src, static_cast<int32_t>(std::max<int64_t>(csr.num_cols, 1)));
    std::vector<Halide::Buffer<>> outs = {wrap(out, key_.layout.extents, "out")};
    if (has_arg_outputs(key_.spec.reduce)) {
        outs.push_back(wrap(*arg_u, key_.layout.extents, "arg_u"));
        outs.push_back(wrap(*arg_e, key_.layout.extents, "arg_e"));
    }
    CudaJITContext ctx(launch);
    try {
        if (outs.size() == 1) pipeline_.realize(&ctx, outs[0], target_, params);
        else pipeline_.realize(&ctx, Halide::Realization(outs), target_, params);
    } catch (const Halide::Error &e) {
        fail<KernelError>("running ", key_.str(), " on the GPU failed: ", e.what());
    }
    // The wrappers only borrow the caller's memory.
    for (auto *list : {&wrapped, &outs})
        for (auto &b : *list) b.get()->device_detach_native(&ctx);
}

void SpmmKernel::run_library(const Graph &graph, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u,
                             Tensor *arg_e, const CudaLaunch &launch) const {
    // The graph's CSR as a view: on a GPU its device copy (row_ptr padded to the row tile and two
    // more entries, at least the rows a view needs), on the CPU the host arrays. Kernels that run on
    // views read nothing else of the graph.
    const CSR &csr = graph.csr();
    GraphView v;
    v.device = key_.device;
    v.num_src = csr.num_cols;
    v.num_dst = csr.num_rows;
    v.num_edges = csr.nnz();
    v.max_degree = graph.max_row_length();
    if (key_.device == Device::CUDA) {
        auto dev = DeviceCsr::get(graph, algo_.row_tile, launch, target_);
        v.row_ptr = device_index_ptr(dev->row_ptr);
        v.row_ptr_len = dev->row_ptr.dim(0).extent();
        v.col_idx = device_index_ptr(dev->col_idx);
        v.edge_ids = key_.identity_edge_ids || !dev->edge_ids.defined() ? nullptr : device_index_ptr(dev->edge_ids);
    } else {
        v.row_ptr = csr.row_ptr.data();
        v.row_ptr_len = static_cast<int64_t>(csr.row_ptr.size());
        v.col_idx = csr.col_idx.data();
        v.edge_ids = key_.identity_edge_ids || csr.edge_ids.empty() ? nullptr : csr.edge_ids.data();
    }
    run(v, lhs, rhs, out, arg_u, arg_e, launch);
}

bool SpmmKernel::runs_on_views() const {
    return algo_.src_tile == 0 && algo_.segment_len == 0 && algo_.tail_len == 0 && !algo_.relabeled &&
           !algo_.rows_bound;
}

void SpmmKernel::run(const GraphView &g, const Tensor &lhs, const Tensor &rhs, Tensor &out, Tensor *arg_u,
                     Tensor *arg_e, const CudaLaunch &launch) const {
    if (!runs_on_views())
        fail<KernelError>("schedule ", key_.schedule.str(),
                          " needs per-graph preprocessing (row orders, row splitting, source tiles or relabeling) and "
                          "cannot run on a graph view; use a schedule that reads only the CSR");
    if (reads_edge_ids(key_.spec) && g.identity_edge_ids() != key_.identity_edge_ids)
        fail<KernelError>("kernel compiled for ", key_.identity_edge_ids ? "identity" : "mapped",
                          " edge ids called on a graph view with the other kind");
    const bool args = has_arg_outputs(key_.spec.reduce);
    if (args && (!arg_u || !arg_e)) fail<ShapeError>(key_.spec.name(), " needs arg_u and arg_e output tensors");
    check_view_run(g, key_.device, key_.dtype, out, g.num_dst, "", {&lhs, &rhs, &out, arg_u, arg_e});
    if (g.num_dst == 0) return;
    if (g.num_edges == 0 && key_.device == Device::CPU) {
        std::memset(out.data(), 0, out.nbytes());
        if (args) {
            std::fill_n(arg_u->data_as<int32_t>(), arg_u->numel(), -1);
            std::fill_n(arg_e->data_as<int32_t>(), arg_e->numel(), -1);
        }
        return;
    }
    ViewCall call(key_.device, target_, launch, library_.get());
    call.index(algo_.row_ptr, g.row_ptr, g.row_ptr_len);
    call.index(algo_.col_idx, g.col_idx, g.num_edges);
    if (algo_.reads_edge_ids) {
        if (!g.edge_ids) fail<KernelError>("kernel ", key_.str(), " reads edge ids but the graph view has none");
        call.index(algo_.edge_ids, g.edge_ids, g.num_edges);
    }
    call.scalar(algo_.max_degree, static_cast<int32_t>(std::max<int64_t>(g.degree_bound(), 1)));
    call.scalar(algo_.num_edges, static_cast<int32_t>(std::max<int64_t>(g.num_edges, 1)));
    call.scalar(algo_.num_src, static_cast<int32_t>(std::max<int64_t>(g.num_src, 1)));
    if (algo_.uses_lhs()) {
        check_operand_alignment(lhs, algo_.operand_alignment, "lhs", key_.schedule.str());
        call.features(algo_.lhs, lhs, key_.layout.lhs_extents());
    }
    if (algo_.uses_rhs()) {
        check_operand_alignment(rhs, algo_.operand_alignment, "rhs", key_.schedule.str());
        call.features(algo_.rhs, rhs, key_.layout.rhs_extents());
    }
    call.output(out, key_.layout.extents, "out");
    if (args) {
        call.output(*arg_u, key_.layout.extents, "arg_u");
        call.output(*arg_e, key_.layout.extents, "arg_e");
    }
    call.run(pipeline_, key_.str() + " on a graph view");
}

void SpmmKernel::prepare(const Graph &graph) const {
    if (graph.csr().num_rows == 0) return;
    // GPU kernels built for the locality order run on the relabeled graph (bind_graph_cuda).
    const bool gpu = key_.device == Device::CUDA;
    const Graph &g = gpu && algo_.relabeled ? graph.relabeled() : graph;
    if (algo_.src_tile > 0) {
        g.source_tile_segments(algo_.src_tile, algo_.segment_len);
        return;
    }
    g.stats();
    if (gpu && algo_.rows_bound) {
        if (algo_.locality_rows) g.locality_idx();
        else g.balanced_idx();
    }
}

void SpmmKernel::upload(const Graph &g, const CudaLaunch &launch) const {
    prepare(g);
    if (key_.device != Device::CUDA || g.csr().num_rows == 0) return;
    Halide::ParamMap params;
    bind_graph_cuda(g, launch, params);
}

const Graph &SpmmKernel::bind_graph_cuda(const Graph &graph, const CudaLaunch &launch, Halide::ParamMap &params) const {
    // A relabeled kernel runs on the graph renumbered in its locality order; its source features are
    // gathered into that order by the pipeline and its rows stored back through the same order.
    const Graph &g = algo_.relabeled ? graph.relabeled() : graph;
    // The segments' offsets, counts and longest segment (row-split and source-tiled kernels).
    auto bind_segments = [&](const DeviceSegments &segs) {
        params.set(algo_.row_ptr, segs.seg_ptr);
        params.set(algo_.row_segs, segs.row_segs);
        params.set(algo_.num_segs, std::max(segs.num_segs, 1));
        params.set(algo_.max_segments, segs.max_segments);
        params.set(algo_.max_degree, segs.max_segment_len);
    };
    if (algo_.src_tile > 0) {
        // Everything comes in source-tile order with the runs (rowBalance is invalid with tiles).
        auto segs = DeviceSegments::get(g, algo_.segment_len, algo_.src_tile, algo_.row_tile, launch, target_);
        bind_segments(*segs);
        params.set(algo_.col_idx, segs->col_idx);
        if (algo_.reads_edge_ids) params.set(algo_.edge_ids, segs->edge_ids);
        params.set(algo_.seg_ids, segs->seg_ids);
        if (key_.spec.reduce == ReduceOp::Mean) params.set(algo_.row_degree_ptr, segs->row_ptr);
    } else {
        auto dev = DeviceCsr::get(g, algo_.segment_len ? 1 : algo_.row_tile, launch, target_);
        params.set(algo_.col_idx, dev->col_idx);
        if (algo_.reads_edge_ids) params.set(algo_.edge_ids, dev->edge_ids);
        if (algo_.segment_len) {
            bind_segments(*DeviceSegments::get(g, algo_.segment_len, 0, algo_.row_tile, launch, target_));
        } else if (algo_.tail_len) {
            // The rows reduce their first tail_len nonzeros (the bound on the row loop), the tails
            // the rest.
            params.set(algo_.row_ptr, dev->row_ptr);
            params.set(algo_.max_degree,
                       static_cast<int32_t>(std::min<int64_t>(algo_.tail_len, g.max_row_length())));
            auto tails = RowTailTable::device(g, algo_.tail_len, launch, target_);
            params.set(algo_.tail_start, tails->tail_start);
            params.set(algo_.tail_end, tails->tail_end);
            params.set(algo_.tail_row, tails->tail_row);
            params.set(algo_.num_tails, tails->num_tails);
        } else {
            params.set(algo_.row_ptr, dev->row_ptr);
            params.set(algo_.max_degree, static_cast<int32_t>(g.max_row_length()));
        }
        if (algo_.relabeled) params.set(algo_.src_order, DeviceRowOrder::get(graph, 1, launch, target_)->order);
        if (algo_.rows_bound)
            params.set(algo_.row_order, algo_.locality_rows
                                            ? DeviceRowOrder::get(g, algo_.row_tile, launch, target_)->order
                                            : dev->balanced);
    }
    return g;
}

}  // namespace gsparse
