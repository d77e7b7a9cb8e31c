#include "autotune/device_mirror.h"

#include "core/error.h"
#include "ops/halide_types.h"
#include "runtime/cuda_launch.h"
#include "runtime/primary_context.h"
#include "runtime/target.h"

namespace gsparse::autotune {

namespace {

const halide_device_interface_t *interface() { return cuda_device_interface(jit_target(Device::CUDA)); }

}  // namespace

DeviceMirror::DeviceMirror() {
    if (!Halide::host_supports_target_device(jit_target(Device::CUDA)))
        fail<Error>("--target cuda: no usable CUDA device on this machine");
    launch_ = CudaLaunch{primary_cuda_context(0), nullptr};
    ctx_ = std::make_shared<CudaJITContext>(launch_);
}

Tensor DeviceMirror::upload(const Tensor &t) {
    if (t.device() != Device::CPU) fail<ShapeError>("DeviceMirror::upload takes host tensors");
    auto buf = std::make_shared<Halide::Runtime::Buffer<>>(halide_type_t(halide_type(t.dtype())), t.data(),
                                                           std::vector<int>{static_cast<int>(t.numel())});
    buf->set_host_dirty();
    if (int err = buf->copy_to_device(interface(), ctx_.get()))
        fail<KernelError>("copying tuning inputs to the GPU failed (Halide error ", err, ")");
    Tensor device = Tensor::wrap(reinterpret_cast<void *>(buf->raw_buffer()->device), t.shape(), t.dtype(), Device::CUDA);
    copies_.push_back({t, device, buf});
    return device;
}

Tensor DeviceMirror::download(const Tensor &device) {
    for (const Copy &c : copies_) {
        if (c.device.data() != device.data()) continue;
        c.buffer->set_host_dirty(false);
        c.buffer->set_device_dirty(true);
        if (int err = c.buffer->copy_to_host(ctx_.get()))
            fail<KernelError>("copying a result back from the GPU failed (Halide error ", err, ")");
        return c.host;
    }
    fail<ShapeError>("DeviceMirror::download: the tensor was not uploaded by this mirror");
}

void DeviceMirror::sync() const {
    if (!copies_.empty()) copies_.back().buffer->device_sync(ctx_.get());
}

}  // namespace gsparse::autotune
