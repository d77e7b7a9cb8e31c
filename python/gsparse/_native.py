"""The bridge to the native module gsparse._C: tensors become (pointer, shape, dtype, device)
tuples, and CUDA calls carry the device and PyTorch's current stream."""

import torch

try:
    from . import _C
except ImportError as e:  # pragma: no cover - depends on the build
    raise ImportError(
        "gsparse's native module gsparse._C was not found: build it with CMake (target "
        "gsparse_python) and put <build>/python on PYTHONPATH next to the package sources"
    ) from e

Error = _C.Error
GraphError = _C.GraphError
FormatError = _C.FormatError
ShapeError = _C.ShapeError
ScheduleError = _C.ScheduleError
KernelError = _C.KernelError

_DTYPE_NAMES = {
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int32: "int32",
    torch.int64: "int64",
}


def tensor_arg(t, name):
    """The native argument for tensor t (which must be contiguous), or None."""
    if t is None:
        return None
    dtype = _DTYPE_NAMES.get(t.dtype)
    if dtype is None:
        raise ShapeError(f"{name} has dtype {t.dtype}; gsparse features are float32 or float64")
    return (t.data_ptr(), t.shape, dtype, "cuda" if t.is_cuda else t.device.type)


def launch_arg(device):
    """(device index, current stream) for a CUDA device, None for the CPU."""
    if device.type != "cuda":
        return None
    index = device.index if device.index is not None else torch.cuda.current_device()
    return (index, _raw_stream(index))


def _current_raw_stream(index):
    return torch.cuda.current_stream(index).cuda_stream


# The current stream's handle without building a torch.cuda.Stream object on every call.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or _current_raw_stream
