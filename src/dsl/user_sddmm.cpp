#include "dsl/user_sddmm.h"

#include <cstring>

#include "core/error.h"
#include "dsl/pipeline_text.h"
#include "halide_ext/ragged_bounds.h"
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

Expr SddmmProgram::operand(const std::string &name, At at, bool broadcast) {
    const Operand &o = declare_operand(operands_, name_, name, at, broadcast, type_);
    Expr row = at == At::Src ? u_ : at == At::Dst ? v_ : Expr(e_);
    return o.param(broadcast ? Expr(0) : Expr(f_), row);
}

void SddmmProgram::edge_value(Expr value) {
    if (!value.defined()) fail<ShapeError>("program ", name_, ": the edge value is undefined");
    value_ = cast(type_, value);
}

struct SddmmKernel::State {
    std::string name;
    Type type;
    int features = 0;
    Device device = Device::CPU;
    std::vector<Operand> operands;
    ImageParam src_idx, dst_idx;
    Param<int32_t> num_edges, num_src, num_dst;
    Pipeline pipeline;
    Target target;
    std::vector<Argument> arguments;
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

void SddmmKernel::run(const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out) const {
    const State &s = *state_;
    if (s.device != Device::CPU)
        fail<KernelError>("user program ", s.name, " was compiled for CUDA; running g-SDDMM programs on the GPU "
                          "is not supported yet");
    const DType dtype = s.type.bits() == 64 ? DType::F64 : DType::F32;
    const COO &coo = g.coo();  // edge-id order
    check_tensor(s.name, "out", out, Device::CPU, dtype, coo.nnz(), s.features);
    const int64_t rows_of[3] = {coo.num_cols, coo.num_rows, coo.nnz()};  // by At
    const std::vector<const Tensor *> given = match_operands(s.name, s.operands, operands, Device::CPU, dtype,
                                                             s.features, rows_of);
    ParamMap params;
    std::vector<Buffer<>> keep;
    for (size_t i = 0; i < s.operands.size(); ++i) {
        const Operand &o = s.operands[i];
        keep.push_back(feature_buffer(*given[i], {o.broadcast ? 1 : s.features}, o.name.c_str()));
        params.set(o.param, keep.back());
    }
    if (coo.nnz() == 0) return;
    params.set(s.src_idx, index_buffer(coo.col, "src_idx"));
    params.set(s.dst_idx, index_buffer(coo.row, "dst_idx"));
    params.set(s.num_edges, static_cast<int32_t>(coo.nnz()));
    params.set(s.num_src, static_cast<int32_t>(std::max<int64_t>(coo.num_cols, 1)));
    params.set(s.num_dst, static_cast<int32_t>(std::max<int64_t>(coo.num_rows, 1)));
    Buffer<> out_buf = feature_buffer(out, {s.features}, "out");
    try {
        state_->pipeline.realize(out_buf, s.target, params);
    } catch (const Halide::Error &e) {
        fail<KernelError>("running user program ", s.name, " failed: ", e.what());
    }
}

std::string SddmmKernel::lowered_stmt() const {
    return lowered_stmt_text(state_->pipeline, state_->arguments, state_->target);
}

std::string SddmmKernel::assembly() const {
    return assembly_text(state_->pipeline, state_->arguments, state_->name, state_->target,
                         "user program " + state_->name);
}

}  // namespace gsparse::dsl
