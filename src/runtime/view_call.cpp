#include "runtime/view_call.h"

#include <algorithm>

#include "core/error.h"
#include "ops/halide_types.h"
#include "runtime/halide_buffers.h"

namespace gsparse {

void check_view_run(const GraphView &g, Device device, DType dtype, const Tensor &out, int64_t out_rows,
                    const char *rows_note, std::initializer_list<const Tensor *> tensors) {
    if (out.dim() < 1 || out.size(0) != out_rows)
        fail<ShapeError>("output ", out.str(), " must have ", out_rows, " rows", rows_note);
    if (out.dtype() != dtype) fail<ShapeError>("output dtype ", dtype_name(out.dtype()), " != kernel dtype");
    if (g.device != device)
        fail<ShapeError>("the graph view is on ", device_name(g.device), " but the kernel runs on ", device_name(device));
    for (const Tensor *t : tensors)
        if (t && t->defined() && t->data() && t->device() != device)
            fail<ShapeError>("tensor ", t->str(), " is on ", device_name(t->device()), " but the kernel runs on ",
                             device_name(device));
}

ViewCall::ViewCall(Device device, const Halide::Target &target, const CudaLaunch &launch, const KernelLibrary *lib)
    : cuda_(device == Device::CUDA), target_(target), launch_(launch), lib_(lib), ctx_(launch) {
    if (lib_) slots_.resize(lib_->arguments().size() + static_cast<size_t>(lib_->num_outputs()));
}

ViewCall::~ViewCall() {
    if (cuda_)
        for (auto *list : {&wrapped_, &outs_})
            for (auto &b : *list) b.get()->device_detach_native(&ctx_);
}

ViewCall::Slot &ViewCall::slot_of(const std::string &name) {
    const auto &args = lib_->arguments();
    for (size_t i = 0; i < args.size(); ++i)
        if (args[i].name == name) return slots_[i];
    fail<KernelError>("kernel has no argument ", name);
}

void ViewCall::view(Slot &slot, Halide::Type type, const void *ptr, const std::vector<int> &sizes, const char *name) {
    if (sizes.size() > kMaxDims) fail<ShapeError>(name, " has more than ", kMaxDims, " dimensions");
    if (!ptr) fail<ShapeError>("null pointer for ", name);
    halide_buffer_t &b = slot.buf;
    b = halide_buffer_t{};
    b.type = type;
    b.dimensions = static_cast<int32_t>(sizes.size());
    b.dim = slot.dims.data();
    int64_t stride = 1;
    for (size_t d = 0; d < sizes.size(); ++d) {
        slot.dims[d] = halide_dimension_t(0, sizes[d], static_cast<int32_t>(stride));
        stride *= sizes[d];
    }
    if (cuda_) {
        // A device-only view: not dirty either way, so the pipeline neither copies nor syncs it.
        b.device = reinterpret_cast<uint64_t>(ptr);
        b.device_interface = lib_->runtime().cuda_interface();
    } else {
        b.host = static_cast<uint8_t *>(const_cast<void *>(ptr));
    }
    slot.set = true;
}

Halide::Buffer<> ViewCall::jit_view(Halide::Type type, const void *ptr, const std::vector<int> &sizes,
                                    const char *name) {
    if (cuda_) wrapped_.push_back(wrap_device_buffer(type, const_cast<void *>(ptr), sizes, target_, name));
    else wrapped_.push_back(Halide::Buffer<>(type, const_cast<void *>(ptr), sizes, name));
    return wrapped_.back();
}

void ViewCall::index(const Halide::ImageParam &p, const index_t *ptr, int64_t len) {
    const std::vector<int> sizes = {static_cast<int>(std::max<int64_t>(len, 1))};
    const std::string name = p.name();
    if (lib_) view(slot_of(name), Halide::Int(32), ptr, sizes, name.c_str());
    else params_.set(p, jit_view(Halide::Int(32), ptr, sizes, name.c_str()));
}

void ViewCall::features(const Halide::ImageParam &p, const Tensor &t, const std::vector<int64_t> &extents) {
    int64_t len = 1;
    for (int64_t e : extents) len *= e;
    const std::string name = p.name();
    if (len != t.row_numel())
        fail<ShapeError>(name, " tensor ", t.str(), " does not match the kernel's feature length ", len);
    const std::vector<int> sizes = halide_sizes(extents, t.size(0));
    if (lib_) view(slot_of(name), halide_type(t.dtype()), t.data(), sizes, name.c_str());
    else params_.set(p, jit_view(halide_type(t.dtype()), t.data(), sizes, name.c_str()));
}

void ViewCall::scalar(const Halide::Param<int32_t> &p, int32_t value) {
    if (!lib_) {
        params_.set(p, value);
        return;
    }
    Slot &s = slot_of(p.name());
    s.value = value;
    s.set = true;
}

void ViewCall::scalar(const Halide::Param<float> &p, float value) {
    if (!lib_) {
        params_.set(p, value);
        return;
    }
    Slot &s = slot_of(p.name());
    s.real = value;
    s.set = true;
}

void ViewCall::output(const Tensor &t, const std::vector<int64_t> &extents, const char *name) {
    int64_t len = 1;
    for (int64_t e : extents) len *= e;
    if (len != t.row_numel())
        fail<ShapeError>(name, " tensor ", t.str(), " does not match the kernel's feature length ", len);
    const std::vector<int> sizes = halide_sizes(extents, t.size(0));
    if (lib_) {
        if (outputs_set_ >= lib_->num_outputs()) fail<KernelError>("kernel has only ", lib_->num_outputs(), " outputs");
        view(slots_[lib_->arguments().size() + static_cast<size_t>(outputs_set_++)], halide_type(t.dtype()), t.data(),
             sizes, name);
        return;
    }
    if (cuda_) outs_.push_back(wrap_device_buffer(halide_type(t.dtype()), t.data(), sizes, target_, name));
    else outs_.push_back(Halide::Buffer<>(halide_type(t.dtype()), t.data(), sizes, name));
}

void ViewCall::run(Halide::Pipeline &pipeline, const std::string &what) {
    if (!lib_) {
        try {
            if (outs_.size() == 1) pipeline.realize(&ctx_, outs_[0], target_, params_);
            else pipeline.realize(&ctx_, Halide::Realization(outs_), target_, params_);
        } catch (const Halide::Error &e) {
            fail<KernelError>("running ", what, " failed: ", e.what());
        }
        return;
    }
    KernelCall call;
    call.cuda_context = launch_.context;
    call.cuda_stream = launch_.stream;
    void *uc = &call;
    std::vector<void *> argv;
    argv.reserve(slots_.size() + 1);
    argv.push_back(&uc);
    const auto &args = lib_->arguments();
    for (size_t i = 0; i < slots_.size(); ++i) {
        Slot &s = slots_[i];
        if (!s.set)
            fail<KernelError>("running ", what, ": ", i < args.size() ? "argument " + args[i].name : std::string("an output"),
                              " was not bound");
        const bool buffer = i >= args.size() || args[i].is_buffer();
        argv.push_back(buffer ? static_cast<void *>(&s.buf) : static_cast<void *>(&s.value));
    }
    const int rc = lib_->call(argv.data());
    if (rc != 0)
        fail<KernelError>("running ", what, " failed (Halide error ", rc, ")", call.error.empty() ? "" : ": ",
                          call.error);
}

}  // namespace gsparse
