// Halide buffers viewing caller memory for a kernel run on a GraphView: host memory directly,
// device memory through device_wrap_native (detached again when the object goes away, also when
// the run throws). Owns the JIT user context of the run (on CUDA it carries the launch's context and
// stream; on the CPU it sets nothing the run uses).
#pragma once

#include <Halide.h>

#include <algorithm>
#include <vector>

#include "core/tensor.h"
#include "graph/formats.h"
#include "runtime/cuda_launch.h"
#include "runtime/halide_buffers.h"

namespace gsparse {

class CallerBuffers {
public:
    CallerBuffers(Device device, const Halide::Target &target, const CudaLaunch &launch)
        : cuda_(device == Device::CUDA), target_(target), ctx_(launch) {}
    ~CallerBuffers() {
        if (cuda_)
            for (auto &b : buffers_) b.get()->device_detach_native(&ctx_);
    }
    CallerBuffers(const CallerBuffers &) = delete;
    CallerBuffers &operator=(const CallerBuffers &) = delete;

    Halide::Buffer<> view(Halide::Type type, const void *ptr, const std::vector<int> &sizes, const char *name) {
        if (cuda_) buffers_.push_back(wrap_device_buffer(type, const_cast<void *>(ptr), sizes, target_, name));
        else buffers_.push_back(Halide::Buffer<>(type, const_cast<void *>(ptr), sizes, name));
        return buffers_.back();
    }
    /// An int32 index array of len entries (at least one: index buffers are never empty).
    Halide::Buffer<> index(const index_t *ptr, int64_t len, const char *name) {
        return view(Halide::Int(32), ptr, {static_cast<int>(std::max<int64_t>(len, 1))}, name);
    }
    /// A feature tensor in its operator's canonical layout (see feature_buffer).
    Halide::Buffer<> features(const Tensor &t, const std::vector<int64_t> &extents, const char *name) {
        int64_t len = 1;
        for (int64_t e : extents) len *= e;
        if (len != t.row_numel())
            fail<ShapeError>(name, " tensor ", t.str(), " does not match the kernel's feature length ", len);
        return view(halide_type(t.dtype()), t.data(), halide_sizes(extents, t.size(0)), name);
    }

    CudaJITContext *context() { return &ctx_; }

private:
    bool cuda_;
    Halide::Target target_;
    CudaJITContext ctx_;
    std::vector<Halide::Buffer<>> buffers_;
};

}  // namespace gsparse
