#include "dsl/user_sddmm.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <mutex>

#include "core/error.h"
#include "dsl/pipeline_text.h"
#include "dsl/static_library.h"
#include "halide_ext/ragged_bounds.h"
#include "runtime/device_graph.h"
#include "runtime/halide_buffers.h"
#include "runtime/lowered_stmt.h"
#include "runtime/target.h"

namespace gsparse::dsl {

using namespace Halide;

SddmmProgram::SddmmProgram(std::string name, Type type)
    : name_(std::move(name)),
      type_(type),
      src_idx_(Int(32), 1, "src_idx"),
      dst_idx_(Int(32), 1, "dst_idx"),
      num_edges_("num_edges"),
      num_src_("num_src"),
      num_dst_("num_dst") {
    check_identifier(name_, "program name");
    if (!type_.is_float() || (type_.bits() != 32 && type_.bits() != 64))
        fail<ShapeError>("program ", name_, ": features are float32 or float64, not ", type_);
    u_ = src_idx_(e_);
    v_ = dst_idx_(e_);
}

Expr SddmmProgram::operand(const std::string &name, At at, bool broadcast, const char *file, int line) {
    const Operand &o = declare_operand(operands_, name_, name, at, broadcast, type_, Site{file ? file : "", line});
    Expr row = at == At::Src ? u_ : at == At::Dst ? v_ : Expr(e_);
    return o.param(broadcast ? Expr(0) : Expr(f_), row);
}

Expr SddmmProgram::operand(const std::string &name, At at, const Columns &columns, const char *file, int line) {
    const Operand &o = declare_operand(operands_, name_, name, at, columns, type_, Site{file ? file : "", line});
    Expr row = at == At::Src ? u_ : at == At::Dst ? v_ : Expr(e_);
    return o.param(o.column, row);
}

std::vector<OperandInfo> SddmmProgram::operands() const { return operand_infos(operands_); }


std::vector<int32_t> SddmmProgram::column_map(const std::string &name, int features) const {
    for (const Operand &o : operands_)
        if (o.name == name) return operand_columns(name_, o, features, f_.name());
    fail<ShapeError>("program ", name_, " has no operand '", name, "'");
}

void SddmmProgram::edge_value(Expr value, const char *file, int line) {
    const Site site{file ? file : "", line};
    if (!value.defined()) fail<ShapeError>("program ", name_, ": the edge value is undefined", site.note("at"));
    value_ = cast(type_, value);
    value_site_ = site;
}

namespace {

/// CUDA threads over features: feature_tile, or 0 for the feature count (at most 32).
int64_t edge_feature_tile(int64_t knob, int features) { return knob > 0 ? knob : std::min(features, 32); }

}  // namespace

const EdgeScheduleDef &default_edge_schedule() {
    static const EdgeScheduleDef def = [] {
        EdgeScheduleDef d;
        d.name = "edge_default";
        d.knobs = {{"edges_per_task", {64, 256, 1024, 4096}, 256},
                   {"vector_width", {1, 4, 8, 16}, 1},
                   {"feature_tile", {0, 1, 2, 4, 8, 16, 32, 64}, 0},
                   {"block_threads", {64, 128, 256, 512}, 256},
                   {"edges_per_thread", {1, 2, 4}, 1},
                   {"feature_vector", {1, 2, 4}, 1}};
        d.why_invalid = [](const SchedulePoint &p, int features, Device device) -> std::string {
            if (device == Device::CUDA) {
                if (p.at("edges_per_task") != 256 || p.at("vector_width") != 1)
                    return "edges_per_task and vector_width are CPU knobs";
                const int64_t ft = edge_feature_tile(p.at("feature_tile"), features);
                const int64_t V = p.at("feature_vector");
                if (ft > 1 && ft / 2 >= features) return "feature_tile is at least twice the feature count";
                if (p.at("block_threads") < ft) return "block_threads is below feature_tile (one edge a block either way)";
                if (V > 1 && features % V != 0) return "feature_vector must divide the feature count";
                if (V > 1 && ft * V > features) return "feature_tile x feature_vector exceeds the feature count";
                return "";
            }
            if (p.at("feature_tile") != 0 || p.at("block_threads") != 256 || p.at("edges_per_thread") != 1 ||
                p.at("feature_vector") != 1)
                return "feature_tile, block_threads, edges_per_thread and feature_vector are CUDA knobs";
            if (p.at("vector_width") > 1 && p.at("vector_width") / 2 >= features)
                return "vector_width is at least twice the feature count";
            return "";
        };
        d.apply = [](EdgeScheduleContext &c) {
            if (c.device == Device::CUDA) {
                // Blocks of feature_tile x edges threads over (features, edges); each thread computes
                // edges_per_thread edges that lie a block's edge threads apart (so that, for each
                // of them, consecutive threads store consecutive edges) and feature_vector features.
                const int ft = static_cast<int>(edge_feature_tile(c.knob("feature_tile"), c.features));
                const int V = static_cast<int>(c.knob("feature_vector"));
                const int te = std::max(1, static_cast<int>(c.knob("block_threads")) / ft);
                const int ept = static_cast<int>(c.knob("edges_per_thread"));
                Var fo("fo"), fi("fi"), fv("fv"), eo("eo"), ei("ei"), ej("ej"), et("et");
                if (V > 1)  // (features >= ft x V and a multiple of V: the shifted last tile stays aligned)
                    c.out.split(c.f, fo, fi, ft * V, TailStrategy::ShiftInwards).split(fi, fi, fv, V);
                else
                    c.out.split(c.f, fo, fi, ft, TailStrategy::GuardWithIf);
                c.out.split(c.e, eo, ei, te * ept, TailStrategy::GuardWithIf).split(ei, ej, et, te);
                if (V > 1) c.out.reorder(fv, ej, fi, et, eo, fo).vectorize(fv);
                else c.out.reorder(ej, fi, et, eo, fo);
                c.out.gpu_blocks(eo, fo).gpu_threads(fi, et);
                if (ept > 1) c.out.unroll(ej);
                return;
            }
            Var eo("eo"), ei("ei");
            c.out.split(c.e, eo, ei, static_cast<int>(c.knob("edges_per_task")), TailStrategy::GuardWithIf).parallel(eo);
            if (const int vw = static_cast<int>(c.knob("vector_width")); vw > 1)
                c.out.vectorize(c.f, vw, TailStrategy::GuardWithIf);
        };
        return d;
    }();
    return def;
}

struct SddmmKernel::State {
    std::string name;
    std::string schedule;
    Type type;
    int features = 0;
    Device device = Device::CPU;
    std::vector<Operand> operands;
    ImageParam src_idx, dst_idx;
    Param<int32_t> num_edges, num_src, num_dst;
    Func out;
    Pipeline pipeline;
    Target target;
    std::vector<Argument> arguments;
    std::once_flag compiled;  // CUDA pipelines are JIT-compiled on their first run
};

SddmmKernel SddmmProgram::compile(int features, Device device, const EdgeScheduleDef &schedule,
                                  const SchedulePoint &point) const {
    if (!value_.defined()) fail<ShapeError>("program ", name_, " has no edge value (call edge_value())");
    if (features < 1) fail<ShapeError>("program ", name_, ": features must be at least 1, got ", features);
    check_operand_columns(name_, operands_, features, f_.name());
    if (!schedule.apply) fail<ScheduleError>("schedule ", schedule.name, " has no directives (apply)");
    const SchedulePoint knobs = schedule.complete(point, features, device);
    auto s = std::make_shared<SddmmKernel::State>();
    s->name = name_;
    s->type = type_;
    s->features = features;
    s->device = device;
    s->src_idx = src_idx_;
    s->dst_idx = dst_idx_;
    s->num_edges = num_edges_;
    s->num_src = num_src_;
    s->num_dst = num_dst_;
    s->operands = operands_;
    Func out(name_ + "_out");
    out(f_, e_) = value_;
    ext::SparseLayout sparse;
    sparse.coo_index_array(src_idx_, num_edges_, num_src_).coo_index_array(dst_idx_, num_edges_, num_dst_);
    ext::infer_ragged_bounds({out}, sparse);
    EdgeScheduleContext ctx;
    ctx.out = out;
    ctx.f = f_;
    ctx.e = e_;
    ctx.device = device;
    ctx.features = features;
    ctx.type = type_;
    ctx.knobs = knobs;
    s->schedule = point_str(schedule, knobs);
    try {
        schedule.apply(ctx);
    } catch (const Halide::Error &e) {
        fail<ScheduleError>("schedule ", s->schedule, " failed on program ", name_, ": ", e.what());
    }
    if (device == Device::CUDA) {
        bool on_blocks = false;
        for (const auto &d : out.function().definition().schedule().dims())
            on_blocks = on_blocks || d.for_type == Internal::ForType::GPUBlock;
        if (!on_blocks)
            fail<ScheduleError>("schedule ", s->schedule, " on CUDA binds no loop of program ", name_,
                                "'s output to GPU blocks (gpu_blocks or gpu_tile)");
    }
    out.bound(f_, 0, features);
    s->out = out;
    s->pipeline = Pipeline(out);
    s->target = jit_target(device);
    s->arguments = {src_idx_, dst_idx_};
    for (const Operand &o : operands_) s->arguments.push_back(o.param);
    s->arguments.push_back(num_edges_);
    s->arguments.push_back(num_src_);
    s->arguments.push_back(num_dst_);
    if (device == Device::CPU) jit_compile(s->pipeline, s->target, device, "user program " + name_);
    SddmmKernel k;
    k.state_ = std::move(s);
    return k;
}

/// The graph's side of a run: its sizes and a function giving its COO in edge-id order (src_idx,
/// dst_idx) as Halide buffers: host buffers on the CPU, device buffers on CUDA; wrappers of caller
/// memory go to `borrowed`, detached after the call.
struct SddmmKernel::Coo {
    int64_t num_src = 0, num_dst = 0, num_edges = 0;
    std::function<std::array<Buffer<>, 2>(State &, std::vector<Buffer<>> &borrowed)> buffers;
};

void SddmmKernel::run(const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                      const CudaLaunch &launch) const {
    const COO &coo = g.coo();  // edge-id order
    Coo c;
    c.num_src = coo.num_cols, c.num_dst = coo.num_rows, c.num_edges = coo.nnz();
    c.buffers = [&g, &coo, &launch](State &s, std::vector<Buffer<>> &) -> std::array<Buffer<>, 2> {
        if (s.device == Device::CUDA) {
            // Copied to the device once per graph and context.
            auto dev = DeviceCoo::get(g, /*by_dst=*/false, 0, launch, s.target);
            return {dev->src, dev->dst};
        }
        return {index_buffer(coo.col, "src_idx"), index_buffer(coo.row, "dst_idx")};
    };
    run_on(c, operands, out, launch);
}

void SddmmKernel::run(const GraphView &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                      const CudaLaunch &launch) const {
    const State &st = *state_;
    g.check_counts();
    if (g.device != st.device)
        fail<GraphError>("user program ", st.name, " runs on ", device_name(st.device), " but the graph view's arrays are on ",
                         device_name(g.device));
    if (g.num_edges > 0) g.check_coo();
    Coo c;
    c.num_src = g.num_src, c.num_dst = g.num_dst, c.num_edges = g.num_edges;
    c.buffers = [&g](State &s, std::vector<Buffer<>> &borrowed) -> std::array<Buffer<>, 2> {
        const int n = static_cast<int>(g.coo_len);
        auto *src = const_cast<index_t *>(g.coo_src), *dst = const_cast<index_t *>(g.coo_dst);
        if (s.device == Device::CUDA) {
            borrowed.push_back(wrap_device_buffer(Int(32), src, {n}, s.target, "src_idx"));
            borrowed.push_back(wrap_device_buffer(Int(32), dst, {n}, s.target, "dst_idx"));
            return {borrowed[borrowed.size() - 2], borrowed.back()};
        }
        return {Buffer<>(Int(32), src, {n}, "src_idx"), Buffer<>(Int(32), dst, {n}, "dst_idx")};
    };
    run_on(c, operands, out, launch);
}

void SddmmKernel::run_on(const Coo &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                         const CudaLaunch &launch) const {
    State &s = *state_;
    const bool cuda = s.device == Device::CUDA;
    if (cuda && !launch.context)
        fail<ShapeError>("user program ", s.name, " runs on CUDA and needs a CudaLaunch with a context");
    const DType dtype = s.type.bits() == 64 ? DType::F64 : DType::F32;
    check_tensor(s.name, "out", out, s.device, dtype, g.num_edges, s.features);
    const int64_t rows_of[3] = {g.num_src, g.num_dst, g.num_edges};  // by At
    const std::vector<const Tensor *> given = match_operands(s.name, s.operands, operands, s.device, dtype,
                                                             s.features, rows_of);
    if (g.num_edges == 0) return;  // no edges: nothing to write
    ParamMap params;
    std::vector<Buffer<>> keep, borrowed;  // borrowed: device wrappers of caller memory, detached after the call
    for (size_t i = 0; i < s.operands.size(); ++i) {
        // (A graph with edges has sources and destinations: every operand has rows here.)
        const Operand &o = s.operands[i];
        const int64_t rows = rows_of[static_cast<int>(o.at)];
        const int width = operand_width(o, s.features);
        if (cuda)
            borrowed.push_back(
                wrap_device_buffer(s.type, given[i]->data(), halide_sizes({width}, rows), s.target, o.name.c_str()));
        else
            keep.push_back(feature_buffer(*given[i], {width}, o.name.c_str()));
        params.set(o.param, cuda ? borrowed.back() : keep.back());
    }
    params.set(s.num_edges, static_cast<int32_t>(g.num_edges));
    params.set(s.num_src, static_cast<int32_t>(std::max<int64_t>(g.num_src, 1)));
    params.set(s.num_dst, static_cast<int32_t>(std::max<int64_t>(g.num_dst, 1)));
    if (!cuda) {
        const std::array<Buffer<>, 2> coo = g.buffers(s, borrowed);
        params.set(s.src_idx, coo[0]);
        params.set(s.dst_idx, coo[1]);
        Buffer<> out_buf = feature_buffer(out, {s.features}, "out");
        try {
            s.pipeline.realize(out_buf, s.target, params);
        } catch (const Halide::Error &e) {
            fail<KernelError>("running user program ", s.name, " failed: ", e.what());
        }
        return;
    }
    std::call_once(s.compiled, [&] { jit_compile(s.pipeline, s.target, Device::CUDA, "user program " + s.name); });
    CudaJITContext ctx(launch);
    auto release = [&] {
        for (auto &b : borrowed) b.get()->device_detach_native(&ctx);
    };
    try {
        const std::array<Buffer<>, 2> coo = g.buffers(s, borrowed);
        params.set(s.src_idx, coo[0]);
        params.set(s.dst_idx, coo[1]);
        borrowed.push_back(
            wrap_device_buffer(s.type, out.data(), halide_sizes({s.features}, g.num_edges), s.target, "out"));
        std::vector<Buffer<>> out_bufs = {borrowed.back()};
        s.pipeline.realize(&ctx, Realization(out_bufs), s.target, params);
    } catch (const Halide::Error &e) {
        release();
        fail<KernelError>("running user program ", s.name, " on the GPU failed: ", e.what());
    } catch (...) {
        release();
        throw;
    }
    release();
}

void SddmmKernel::compile_to_static_library(const std::string &dir, const std::string &name) const {
    write_static_library(state_->pipeline, state_->arguments, state_->target, dir, name, state_->name);
}

std::vector<std::string> SddmmKernel::argument_names() const {
    std::vector<std::string> names;
    for (const Argument &a : state_->arguments) names.push_back(a.name);
    names.push_back(state_->out.name());
    return names;
}

const std::string &SddmmKernel::schedule() const { return state_->schedule; }

std::vector<MeasuredPoint> search_schedule(const SddmmProgram &program, const EdgeScheduleDef &schedule, int features,
                                           Device device, const Graph &g,
                                           const std::map<std::string, Tensor> &operands, Tensor &out,
                                           const CudaLaunch &launch, int runs, const std::function<void()> &sync) {
    return measure_points(program, schedule, schedule.space(features, device), features, device, g, operands, out,
                          launch, runs, sync);
}

std::vector<MeasuredPoint> measure_points(const SddmmProgram &program, const EdgeScheduleDef &schedule,
                                          const std::vector<SchedulePoint> &points, int features, Device device,
                                          const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                                          const CudaLaunch &launch, int runs, const std::function<void()> &sync) {
    check_search(runs, device, sync);
    std::vector<MeasuredPoint> measured;
    for (const auto &point : points) {
        const SddmmKernel k = program.compile(features, device, schedule, point);
        measured.push_back({point, median_run_ms([&] { k.run(g, operands, out, launch); }, runs, sync)});
    }
    std::sort(measured.begin(), measured.end(),
              [](const MeasuredPoint &a, const MeasuredPoint &b) { return a.median_ms < b.median_ms; });
    return measured;
}

std::string SddmmKernel::lowered_stmt() const {
    return lowered_stmt_text(state_->pipeline, state_->arguments, state_->target);
}

std::string SddmmKernel::assembly() const {
    return assembly_text(state_->pipeline, state_->arguments, state_->name, state_->target,
                         "user program " + state_->name);
}

}  // namespace gsparse::dsl
