// The C++ API: argument checks, layout planning, schedule choice, kernel lookup and the call.
#include <algorithm>

#include "api/gsparse.h"
#include "ops/halide_types.h"
#include "runtime/device_graph.h"
#include "runtime/sddmm_kernel.h"
#include "runtime/spmm_kernel.h"
#include "runtime/spmm_push_kernel.h"
#include "runtime/spmm_segment_kernel.h"
#include "runtime/target.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"
#include "schedules/spmm_segments.h"
#include "schedules/spmm_selector.h"

namespace gsparse {

namespace {

std::vector<int64_t> feature_shape(const Tensor &t) {
    return std::vector<int64_t>(t.shape().begin() + 1, t.shape().end());
}

/// Checks one operand and returns its feature shape.
std::vector<int64_t> check_operand(const Tensor &t, const char *name, int64_t rows, const char *rows_what) {
    if (!t.defined() || t.dim() < 1)
        fail<ShapeError>(name, " must be a tensor with a leading ", rows_what, " dimension, got ",
                         t.defined() ? t.str() : std::string("an undefined tensor"));
    if (t.size(0) != rows) fail<ShapeError>(name, " ", t.str(), " must have ", rows, " rows (", rows_what, ")");
    check_feature_dtype(t.dtype());
    return feature_shape(t);
}

DType operand_dtype(BinaryOp op, const Tensor &lhs, const Tensor &rhs) {
    if (uses_lhs(op) && uses_rhs(op) && lhs.dtype() != rhs.dtype())
        fail<ShapeError>("lhs ", lhs.str(), " and rhs ", rhs.str(), " have different dtypes");
    return uses_lhs(op) ? lhs.dtype() : rhs.dtype();
}

/// The node and edge counts operands are checked against (a Graph's or a GraphView's).
struct Sizes {
    int64_t src, dst, edges;
    Sizes(const Graph &g) : src(g.num_src()), dst(g.num_dst()), edges(g.num_edges()) {}
    Sizes(const GraphView &g) : src(g.num_src), dst(g.num_dst), edges(g.num_edges) {}
    int64_t num_src() const { return src; }
    int64_t num_dst() const { return dst; }
    int64_t num_edges() const { return edges; }
};

struct SpmmPlan {
    FeatureLayout layout;
    DType dtype;
};

/// The layout and dtype of ⊕ on a node operand lhs (lhs_rows rows: lhs_what) and an edge operand rhs
/// (num_edges rows), checking the operands ⊕ uses.
SpmmPlan plan_messages(BinaryOp op, const Tensor &lhs, const char *lhs_name, int64_t lhs_rows, const char *lhs_what,
                       const Tensor &rhs, int64_t num_edges) {
    std::vector<int64_t> lf, rf;
    if (uses_lhs(op)) lf = check_operand(lhs, lhs_name, lhs_rows, lhs_what);
    if (uses_rhs(op)) rf = check_operand(rhs, "rhs (edge features)", num_edges, "edges");
    if (!uses_lhs(op)) lf = rf;
    if (!uses_rhs(op)) rf = lf;
    return {plan_features(op, lf, rf), operand_dtype(op, lhs, rhs)};
}

SpmmPlan plan_spmm(const Sizes &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    check_spmm_spec(spec);
    return plan_messages(spec.op, lhs, "lhs (source-node features)", g.num_src(), "source nodes", rhs, g.num_edges());
}

int64_t operand_rows(const Sizes &g, OperandTarget t) {
    return t == OperandTarget::Src ? g.num_src() : t == OperandTarget::Dst ? g.num_dst() : g.num_edges();
}

const char *rows_what(OperandTarget t) {
    return t == OperandTarget::Src ? "source nodes" : t == OperandTarget::Dst ? "destination nodes" : "edges";
}

SpmmPlan plan_sddmm(const Sizes &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    std::vector<int64_t> lf, rf;
    if (uses_lhs(spec.op)) lf = check_operand(lhs, "lhs", operand_rows(g, spec.lhs), rows_what(spec.lhs));
    if (uses_rhs(spec.op)) rf = check_operand(rhs, "rhs", operand_rows(g, spec.rhs), rows_what(spec.rhs));
    if (!uses_lhs(spec.op)) lf = rf;
    if (!uses_rhs(spec.op)) rf = lf;
    return {plan_features(spec.op, lf, rf), operand_dtype(spec.op, lhs, rhs)};
}

void check_output(const Tensor &out, const std::vector<int64_t> &shape, DType dtype, const char *name) {
    if (out.shape() != shape || out.dtype() != dtype)
        fail<ShapeError>(name, " ", out.defined() ? out.str() : std::string("(undefined)"), " must be ",
                         dtype_name(dtype), shape_str(shape));
}

/// The device all used operands and outputs live on; throws ShapeError when they disagree.
Device common_device(std::initializer_list<const Tensor *> tensors) {
    const Tensor *first = nullptr;
    for (const Tensor *t : tensors) {
        if (!t || !t->defined() || t->dim() == 0) continue;
        if (!first) first = t;
        else if (t->device() != first->device())
            fail<ShapeError>("tensors on different devices: ", first->str(), " on ", device_name(first->device()), " and ",
                             t->str(), " on ", device_name(t->device()));
    }
    return first ? first->device() : Device::CPU;
}

void require_cpu(Device d, const char *op) {
    if (d != Device::CPU)
        fail<ShapeError>(op, " allocates its outputs on the CPU; for device tensors allocate the outputs on the device "
                             "and call ", op, "_into");
}

std::vector<int64_t> with_rows(int64_t rows, const std::vector<int64_t> &feat) {
    std::vector<int64_t> s{rows};
    s.insert(s.end(), feat.begin(), feat.end());
    return s;
}

}  // namespace

std::vector<int64_t> gspmm_output_shape(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    return with_rows(g.num_dst(), plan_spmm(g, spec, lhs, rhs).layout.out_shape);
}

std::vector<int64_t> gsddmm_output_shape(const Graph &g, const SddmmSpec &spec, const Tensor &lhs,
                                         const Tensor &rhs) {
    return with_rows(g.num_edges(), plan_sddmm(g, spec, lhs, rhs).layout.out_shape);
}

namespace {

/// The segment form where the segment gate sends a g-SpMM on a graph (spmm_selector.h), else nullopt.
std::optional<ScheduleParams> gated_segments(const SpmmSpec &spec, const Problem &problem, Device device) {
    if (device != Device::CUDA || !segments_supported(spec)) return std::nullopt;
    return select_spmm_segments(problem);
}

/// The default of a g-SpMM on a graph: the row default where it runs wide rows in the row-tail
/// form (spmm_selector.h: kRowTailsOverSegmentsFeatures), else the segment gate's point where the
/// gate sends the problem, else the row default. Wide rows the gate sends to the segments whose row
/// default does not split them run that default's tile in the row-tail form instead
/// (gpu_spmm_row_tails_form): on the zoo's training graphs where this happens (cl-3m-sparse,
/// rmat-s21-nat; F = 256 and 512, copy_lhs and u_mul_e) it was 1.34x-1.57x faster than the segment
/// form (H100, 2026-11-28, benchmarks/results/2026-11-28-nvidia-h100-80gb-hbm3-unsplit-rows-tails).
ScheduleParams default_on_graph(const SpmmSpec &spec, const Problem &problem, Device device) {
    ScheduleParams rows = default_spmm_schedule(device).default_params(problem);
    const bool wide = problem.layout.extents[0] >= kRowTailsOverSegmentsFeatures;
    if (rows.get_or("rowTails", 0) != 0 && wide) return rows;
    if (auto segments = gated_segments(spec, problem, device)) {
        if (wide && rows.get_or("kRowSplit", 0) == 0)
            if (auto tails = gpu_spmm_row_tails_form(rows, problem)) return *tails;
        return *segments;
    }
    return rows;
}

}  // namespace

ScheduleParams gspmm_default_schedule(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                                      Device device) {
    const SpmmPlan plan = plan_spmm(g, spec, lhs, rhs);
    return default_on_graph(spec, spmm_problem(spec, plan.layout, g.stats(), plan.dtype), device);
}

ScheduleParams gspmm_default_schedule(const Graph &g, const SpmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                                      const std::vector<int64_t> &rhs_feat, DType dtype, Device device) {
    check_spmm_spec(spec);
    return default_on_graph(spec, spmm_problem(spec, plan_op_features(spec.op, lhs_feat, rhs_feat), g.stats(), dtype),
                            device);
}

ScheduleParams gsddmm_default_schedule(const Graph &g, const SddmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                                       const std::vector<int64_t> &rhs_feat, DType dtype, Device device) {
    return default_sddmm_schedule(device).default_params(
        sddmm_problem(plan_op_features(spec.op, lhs_feat, rhs_feat), g.stats(), dtype));
}

ScheduleParams gspmm_row_default_schedule(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                                          Device device) {
    const SpmmPlan plan = plan_spmm(g, spec, lhs, rhs);
    return default_spmm_schedule(device).default_params(spmm_problem(spec, plan.layout, g.stats(), plan.dtype));
}

namespace {

const index_t *device_ptr(const Halide::Buffer<> &b) {
    return reinterpret_cast<const index_t *>(static_cast<uintptr_t>(b.raw_buffer()->device));
}

/// g-SpMM by nonzeros on a graph: a view over its COO in edge-id order (and its CSR, for mean's
/// degrees) -- the graph's own arrays on the CPU, its device copies on CUDA (uploaded once per graph
/// and context, shared with g-SDDMM and the row schedules).
void gspmm_segments_on_graph(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                             const OpOptions &options) {
    const Device device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out});
    GraphView v;
    v.device = device;
    v.num_src = g.num_src();
    v.num_dst = g.num_dst();
    v.num_edges = g.num_edges();
    v.max_degree = g.max_row_length();
    static const index_t kNoEdge = 0;  // views hold at least one col_idx and COO entry
    std::shared_ptr<DeviceCsr> csr_copy;
    std::shared_ptr<DeviceCoo> coo_copy;
    if (device == Device::CUDA) {
        if (g.num_edges() == 0) {
            // Nothing to add up: the default kernel writes the zeros.
            OpOptions plain = options;
            plain.schedule.reset();
            gspmm_into(g, spec, lhs, rhs, out, nullptr, nullptr, plain);
            return;
        }
        const Halide::Target target = jit_target(Device::CUDA);
        csr_copy = DeviceCsr::get(g, static_cast<int>(kViewRowPad), options.cuda, target);
        coo_copy = DeviceCoo::get(g, false, 0, options.cuda, target);
        v.row_ptr = device_ptr(csr_copy->row_ptr);
        v.row_ptr_len = csr_copy->row_ptr.dim(0).extent();
        v.col_idx = device_ptr(csr_copy->col_idx);
        v.coo_src = device_ptr(coo_copy->src);
        v.coo_dst = device_ptr(coo_copy->dst);
        v.coo_len = coo_copy->src.dim(0).extent();
    } else {
        const CSR &csr = g.csr();
        const COO &coo = g.coo();
        v.row_ptr = csr.row_ptr.data();
        v.row_ptr_len = static_cast<int64_t>(csr.row_ptr.size());
        v.col_idx = csr.nnz() ? csr.col_idx.data() : &kNoEdge;
        v.coo_src = coo.nnz() ? coo.col.data() : &kNoEdge;
        v.coo_dst = coo.nnz() ? coo.row.data() : &kNoEdge;
        v.coo_len = std::max<int64_t>(coo.nnz(), 1);
    }
    gspmm_segments_into(v, spec, lhs, rhs, out, options);
}

}  // namespace

void gspmm_into(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                Tensor *arg_u, Tensor *arg_e, const OpOptions &options) {
    if (options.schedule && is_segment_point(*options.schedule)) {
        gspmm_segments_on_graph(g, spec, lhs, rhs, out, options);
        return;
    }
    SpmmPlan plan = plan_spmm(g, spec, lhs, rhs);
    const auto shape = with_rows(g.num_dst(), plan.layout.out_shape);
    check_output(out, shape, plan.dtype, "out");
    if (has_arg_outputs(spec.reduce)) {
        if (!arg_u || !arg_e) fail<ShapeError>(spec.name(), " needs arg_u and arg_e outputs");
        check_output(*arg_u, shape, DType::I32, "arg_u");
        check_output(*arg_e, shape, DType::I32, "arg_e");
    }
    SpmmKernelKey key;
    key.spec = spec;
    key.layout = plan.layout;
    key.dtype = plan.dtype;
    key.identity_edge_ids = spmm_identity_edge_ids(spec, g);
    key.device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out, arg_u, arg_e});
    const Problem problem = spmm_problem(spec, plan.layout, g.stats(), plan.dtype);
    key.schedule = options.schedule ? *options.schedule : default_on_graph(spec, problem, key.device);
    if (!options.schedule && is_segment_point(key.schedule)) {
        OpOptions chosen = options;
        chosen.schedule = key.schedule;
        gspmm_segments_on_graph(g, spec, lhs, rhs, out, chosen);
        return;
    }
    auto kernel = SpmmKernel::get(key, options.cache ? *options.cache : KernelCache::global());
    kernel->run(g, lhs, rhs, out, arg_u, arg_e, options.cuda);
}

namespace {

void check_view_device(const GraphView &g, Device tensors) {
    if (g.device != tensors)
        fail<ShapeError>("the graph view's arrays are on ", device_name(g.device), " but the tensors on ",
                         device_name(tensors));
}

}  // namespace

void gspmm_into(const GraphView &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                Tensor *arg_u, Tensor *arg_e, const OpOptions &options) {
    if (options.schedule && is_segment_point(*options.schedule)) {
        gspmm_segments_into(g, spec, lhs, rhs, out, options);
        return;
    }
    g.check();
    SpmmPlan plan = plan_spmm(g, spec, lhs, rhs);
    const auto shape = with_rows(g.num_dst, plan.layout.out_shape);
    check_output(out, shape, plan.dtype, "out");
    if (has_arg_outputs(spec.reduce)) {
        if (!arg_u || !arg_e) fail<ShapeError>(spec.name(), " needs arg_u and arg_e outputs");
        check_output(*arg_u, shape, DType::I32, "arg_u");
        check_output(*arg_e, shape, DType::I32, "arg_e");
    }
    SpmmKernelKey key;
    key.spec = spec;
    key.layout = plan.layout;
    key.dtype = plan.dtype;
    key.identity_edge_ids = !reads_edge_ids(spec) || g.identity_edge_ids();
    key.device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out, arg_u, arg_e});
    check_view_device(g, key.device);
    // The graph-blind default: the kernel depends on the operator and feature shapes only.
    const Problem problem = spmm_problem(spec, plan.layout, {}, plan.dtype);
    key.schedule = options.schedule ? *options.schedule : default_spmm_schedule(key.device).default_params(problem);
    auto kernel = SpmmKernel::get(key, options.cache ? *options.cache : KernelCache::global());
    kernel->run(g, lhs, rhs, out, arg_u, arg_e, options.cuda);
}

void gsddmm_into(const GraphView &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                 const OpOptions &options) {
    g.check_counts();  // g-SDDMM reads the COO (checked by the kernel), not the CSR
    SpmmPlan plan = plan_sddmm(g, spec, lhs, rhs);
    check_output(out, with_rows(g.num_edges, plan.layout.out_shape), plan.dtype, "out");
    SddmmKernelKey key;
    key.spec = spec;
    key.layout = plan.layout;
    key.dtype = plan.dtype;
    key.device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out});
    check_view_device(g, key.device);
    const Problem problem = sddmm_problem(plan.layout, {}, plan.dtype);
    key.schedule = options.schedule ? *options.schedule : default_sddmm_schedule(key.device).default_params(problem);
    key.fit_indexing({&lhs, &rhs, &out});
    auto kernel = SddmmKernel::get(key, options.cache ? *options.cache : KernelCache::global());
    kernel->run(g, lhs, rhs, out, options.cuda);
}

void gspmm_transposed_into(const GraphView &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                           Tensor &out, const OpOptions &options) {
    g.check();
    if (!push_supported(spec))
        fail<ScheduleError>("the transposed g-SpMM computes copy_lhs, copy_rhs, mul and div with sum or mean, not ",
                            spec.name());
    if (options.schedule) fail<ScheduleError>("the transposed g-SpMM has no schedule parameters");
    const SpmmPlan plan =
        plan_messages(spec.op, lhs, "lhs (destination-node features)", g.num_dst, "destination nodes", rhs, g.num_edges);
    SpmmPushKernelKey key;
    key.spec = spec;
    key.layout = plan.layout;
    key.dtype = plan.dtype;
    check_output(out, with_rows(g.num_src, key.layout.out_shape), key.dtype, "out");
    key.identity_edge_ids = !uses_rhs(spec.op) || g.identity_edge_ids();
    key.device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out});
    check_view_device(g, key.device);
    auto kernel = SpmmPushKernel::get(key, options.cache ? *options.cache : KernelCache::global());
    kernel->run(g, lhs, rhs, out, options.cuda);
}

void gspmm_segments_into(const GraphView &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                         const OpOptions &options) {
    // The COO alone, and for mean the CSR's row lengths (the in-degrees).
    if (spec.reduce == ReduceOp::Mean) g.check();
    else g.check_counts();
    g.check_coo();
    if (!segments_supported(spec))
        fail<ScheduleError>("g-SpMM by nonzeros reduces by sum or mean, not ", spec.name());
    const SegmentPoint point = options.schedule ? segment_point_of(*options.schedule) : SegmentPoint{};
    const SpmmPlan plan =
        plan_messages(spec.op, lhs, "lhs (source-node features)", g.num_src, "source nodes", rhs, g.num_edges);
    SpmmSegmentKernelKey key;
    key.spec = spec;
    key.layout = plan.layout;
    key.dtype = plan.dtype;
    key.point = point;
    check_output(out, with_rows(g.num_dst, key.layout.out_shape), key.dtype, "out");
    key.device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out});
    check_view_device(g, key.device);
    auto kernel = SpmmSegmentKernel::get(key, options.cache ? *options.cache : KernelCache::global());
    kernel->run(g, lhs, rhs, out, options.cuda);
}

SpmmResult gspmm(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                 const OpOptions &options) {
    SpmmPlan plan = plan_spmm(g, spec, lhs, rhs);
    require_cpu(common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr}), "gspmm");
    const auto shape = with_rows(g.num_dst(), plan.layout.out_shape);
    SpmmResult r;
    r.out = Tensor::empty(shape, plan.dtype);
    if (has_arg_outputs(spec.reduce)) {
        r.arg_u = Tensor::empty(shape, DType::I32);
        r.arg_e = Tensor::empty(shape, DType::I32);
    }
    const bool args = has_arg_outputs(spec.reduce);
    gspmm_into(g, spec, lhs, rhs, r.out, args ? &r.arg_u : nullptr, args ? &r.arg_e : nullptr, options);
    return r;
}

SpmmResult gspmm(const Graph &g, const std::string &op, const std::string &reduce, const Tensor &lhs,
                 const Tensor &rhs, const OpOptions &options) {
    return gspmm(g, SpmmSpec{parse_binary_op(op), parse_reduce_op(reduce)}, lhs, rhs, options);
}

void gsddmm_into(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                 const OpOptions &options) {
    SpmmPlan plan = plan_sddmm(g, spec, lhs, rhs);
    check_output(out, with_rows(g.num_edges(), plan.layout.out_shape), plan.dtype, "out");
    SddmmKernelKey key;
    key.spec = spec;
    key.layout = plan.layout;
    key.dtype = plan.dtype;
    key.device = common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr, &out});
    const Problem problem = sddmm_problem(plan.layout, g.stats(), plan.dtype);
    key.schedule = options.schedule ? *options.schedule : default_sddmm_schedule(key.device).default_params(problem);
    key.fit_indexing({&lhs, &rhs, &out});
    auto kernel = SddmmKernel::get(key, options.cache ? *options.cache : KernelCache::global());
    kernel->run(g, lhs, rhs, out, options.cuda);
}

Tensor gsddmm(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
              const OpOptions &options) {
    SpmmPlan plan = plan_sddmm(g, spec, lhs, rhs);
    require_cpu(common_device({uses_lhs(spec.op) ? &lhs : nullptr, uses_rhs(spec.op) ? &rhs : nullptr}), "gsddmm");
    Tensor out = Tensor::empty(with_rows(g.num_edges(), plan.layout.out_shape), plan.dtype);
    gsddmm_into(g, spec, lhs, rhs, out, options);
    return out;
}

Tensor gsddmm(const Graph &g, const std::string &op, const Tensor &lhs, const Tensor &rhs,
              const std::string &lhs_target, const std::string &rhs_target, const OpOptions &options) {
    return gsddmm(g, SddmmSpec{parse_binary_op(op), parse_target(lhs_target), parse_target(rhs_target)}, lhs, rhs,
                  options);
}

}  // namespace gsparse
