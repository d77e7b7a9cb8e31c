// Where GPU kernels run: the CUDA context and stream of the caller, passed to Halide's CUDA runtime
// through JIT handlers so kernels share memory and ordering with the application.
#pragma once

#include <Halide.h>

namespace gsparse {

/// A CUcontext and a CUstream, as void * (gsparse does not link the CUDA libraries itself). A null
/// context lets the Halide runtime use its own; a null stream is the context's default stream.
struct CudaLaunch {
    void *context = nullptr;
    void *stream = nullptr;
};

/// A JITUserContext whose CUDA handlers hand the launch's context and stream to Halide.
class CudaJITContext : public Halide::JITUserContext {
public:
    explicit CudaJITContext(const CudaLaunch &launch);
    const CudaLaunch &launch() const { return launch_; }
    /// Runtime errors of direct runtime calls on this context (copies, frees) are collected in
    /// errors() instead of going to the JIT's default handler, which aborts the process. (Pipeline
    /// realizations report their errors themselves.)
    void capture_errors();
    const std::string &errors() const { return errors_; }

private:
    CudaLaunch launch_;
    std::string errors_;
};

/// The Halide device interface of the JIT's CUDA runtime.
const halide_device_interface_t *cuda_device_interface(const Halide::Target &target);

/// An input or output viewing device memory (no host copy): the buffer carries the device pointer
/// through device_wrap_native.
Halide::Buffer<> wrap_device_buffer(Halide::Type type, void *device_ptr, const std::vector<int> &sizes,
                                    const Halide::Target &target, const char *name);

}  // namespace gsparse
