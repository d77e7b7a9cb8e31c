#include "dsl/user_sddmm.h"

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

std::vector<OperandInfo> SddmmProgram::operands() const { return operand_infos(operands_); }

void SddmmProgram::edge_value(Expr value, const char *file, int line) {
    const Site site{file ? file : "", line};
    if (!value.defined()) fail<ShapeError>("program ", name_, ": the edge value is undefined", site.note("at"));
    value_ = cast(type_, value);
    value_site_ = site;
}

struct SddmmKernel::State {
    std::string name;
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

SddmmKernel SddmmProgram::compile(int features, Device device) const {
    if (!value_.defined()) fail<ShapeError>("program ", name_, " has no edge value (call edge_value())");
    if (features < 1) fail<ShapeError>("program ", name_, ": features must be at least 1, got ", features);
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
    if (device == Device::CUDA) {
        Var fo("fo"), fi("fi"), eo("eo"), ei("ei");
        const int ftile = features >= 32 ? 32 : features;
        out.gpu_tile(f_, e_, fo, eo, fi, ei, ftile, std::max(1, 256 / ftile), TailStrategy::GuardWithIf);
    } else {
        Var eo("eo"), ei("ei");
        out.split(e_, eo, ei, 256, TailStrategy::GuardWithIf).parallel(eo);
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
        const int width = o.broadcast ? 1 : s.features;
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

std::string SddmmKernel::lowered_stmt() const {
    return lowered_stmt_text(state_->pipeline, state_->arguments, state_->target);
}

std::string SddmmKernel::assembly() const {
    return assembly_text(state_->pipeline, state_->arguments, state_->name, state_->target,
                         "user program " + state_->name);
}

}  // namespace gsparse::dsl
