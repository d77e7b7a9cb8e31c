// Conversions of the Python package's tensor and launch arguments.
#include "tensor_args.h"

#include "core/error.h"
#include "runtime/primary_context.h"

namespace gsparse::python {

Tensor view_tensor(const std::optional<TensorArg> &arg, const char *name) {
    if (!arg) return Tensor();
    const auto &[ptr, shape, dtype, device] = *arg;
    Device dev;
    if (device == "cpu") dev = Device::CPU;
    else if (device == "cuda") dev = Device::CUDA;
    else fail<ShapeError>(name, " is on device '", device, "'; gsparse runs on cpu and cuda tensors");
    int64_t numel = 1;
    for (int64_t s : shape) {
        if (s < 0) fail<ShapeError>(name, " has a negative size in ", shape_str(shape));
        numel *= s;
    }
    if (ptr == 0 && numel > 0) fail<ShapeError>(name, " ", shape_str(shape), " has a null data pointer");
    return Tensor::wrap(reinterpret_cast<void *>(ptr), shape, parse_dtype(dtype), dev);
}

CudaLaunch cuda_launch(const std::optional<LaunchArg> &launch) {
    CudaLaunch l;
    if (!launch) return l;
    const auto &[device, stream] = *launch;
    if (device < 0) fail<ShapeError>("CUDA device index ", device, " is negative");
    l.context = primary_cuda_context(device);
    l.stream = reinterpret_cast<void *>(stream);
    return l;
}

}  // namespace gsparse::python
