// Host tensors mirrored on the GPU for measuring kernels there: each upload is a device copy owned
// by a Halide buffer in device 0's primary context (where every kernel of a call without a CUDA
// context runs: JIT pipelines and cached libraries alike), kept alive by the mirror; the host
// tensor's memory stays the copy's host side, so results can be read back into it.
#pragma once

#include <Halide.h>

#include <memory>
#include <vector>

#include "core/tensor.h"
#include "runtime/cuda_launch.h"

namespace gsparse::autotune {

class DeviceMirror {
public:
    /// Throws Error when this machine has no usable CUDA device.
    DeviceMirror();
    /// A CUDA tensor of t's shape and dtype holding t's values. t must stay alive with the mirror.
    Tensor upload(const Tensor &t);
    /// Copies a tensor returned by upload() back into the host tensor it was uploaded from, and
    /// returns that host tensor.
    Tensor download(const Tensor &device);
    /// Waits for the device's queued work.
    void sync() const;
    /// Where the mirror's tensors live: device 0's primary context, its default stream (what calls
    /// that take an explicit launch, such as user programs on CUDA, are given).
    CudaLaunch launch() const { return launch_; }

private:
    struct Copy {
        Tensor host, device;
        std::shared_ptr<Halide::Runtime::Buffer<>> buffer;
    };
    CudaLaunch launch_;
    std::shared_ptr<Halide::JITUserContext> ctx_;
    std::vector<Copy> copies_;
};

}  // namespace gsparse::autotune
