// Tensors as the Python package passes them: raw data pointers with shapes, dtype names and device
// kinds (no LibTorch types cross the boundary), turned into gsparse::Tensor views of that memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/tensor.h"
#include "runtime/cuda_launch.h"

namespace gsparse::python {

/// (data pointer, shape, dtype name such as "float32", device kind "cpu" or "cuda").
using TensorArg = std::tuple<uintptr_t, std::vector<int64_t>, std::string, std::string>;
/// (CUDA device index, CUstream as an integer; 0 is the default stream).
using LaunchArg = std::tuple<int, uintptr_t>;

/// A view of the argument's memory; an undefined Tensor for nullopt. Throws ShapeError naming
/// `name` for an unknown device kind or a null pointer to a non-empty tensor.
Tensor view_tensor(const std::optional<TensorArg> &arg, const char *name);

/// The CUDA context (PyTorch's primary context of the device) and stream of a launch; an empty
/// launch (CPU tensors) for nullopt.
CudaLaunch cuda_launch(const std::optional<LaunchArg> &launch);

}  // namespace gsparse::python
