// One kernel run on caller memory (a GraphView and feature tensors): binds the pipeline's arguments
// by parameter and runs it, either through a library from the persistent kernel cache (raw
// halide_buffer_t views handed to its argv entry point: no Halide front-end work per call) or
// through the JIT-compiled pipeline (Halide::Buffer views and a ParamMap). Device memory is
// wrapped, never copied; the JIT path's wrappers are detached again when the object goes away, also
// when the run throws.
#pragma once

#include <Halide.h>

#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/formats.h"
#include "graph/graph_view.h"
#include "runtime/cuda_launch.h"
#include "runtime/kernel_library.h"

namespace gsparse {

/// The checks of a kernel's run on a graph view: out has out_rows rows (rows_note follows the count in
/// the message) and the kernel's dtype, and the view and the given tensors (null, undefined or empty
/// ones skipped) live on the kernel's device; ShapeError naming the problem otherwise.
void check_view_run(const GraphView &g, Device device, DType dtype, const Tensor &out, int64_t out_rows,
                    const char *rows_note, std::initializer_list<const Tensor *> tensors);

class ViewCall {
public:
    /// lib: the kernel's cached library, or null to run the JIT-compiled pipeline.
    ViewCall(Device device, const Halide::Target &target, const CudaLaunch &launch, const KernelLibrary *lib);
    ~ViewCall();
    ViewCall(const ViewCall &) = delete;
    ViewCall &operator=(const ViewCall &) = delete;

    /// An int32 index array of len entries (at least one: index buffers are never empty).
    void index(const Halide::ImageParam &p, const index_t *ptr, int64_t len);
    /// A feature tensor in its operator's canonical layout (feature extents innermost first).
    void features(const Halide::ImageParam &p, const Tensor &t, const std::vector<int64_t> &extents);
    void scalar(const Halide::Param<int32_t> &p, int32_t value);
    void scalar(const Halide::Param<float> &p, float value);
    /// The next output buffer of the pipeline (in the order of its outputs).
    void output(const Tensor &t, const std::vector<int64_t> &extents, const char *name);
    /// Runs; throws KernelError naming what when Halide reports an error.
    void run(Halide::Pipeline &pipeline, const std::string &what);

private:
    static constexpr int kMaxDims = 8;
    struct Slot {
        halide_buffer_t buf{};
        std::array<halide_dimension_t, kMaxDims> dims{};
        union {  // a scalar argument (argv points at it whatever its type)
            int32_t value = 0;
            float real;
        };
        bool set = false;
    };
    /// Fills slot with a view of ptr (type, sizes innermost first).
    void view(Slot &slot, Halide::Type type, const void *ptr, const std::vector<int> &sizes, const char *name);
    Slot &slot_of(const std::string &name);
    Halide::Buffer<> jit_view(Halide::Type type, const void *ptr, const std::vector<int> &sizes, const char *name);

    bool cuda_;
    Halide::Target target_;
    CudaLaunch launch_;
    const KernelLibrary *lib_;
    // Library calls.
    std::vector<Slot> slots_;  // arguments, then outputs (sized once: buffers point into it)
    int outputs_set_ = 0;
    // JIT calls.
    CudaJITContext ctx_;
    Halide::ParamMap params_;
    std::vector<Halide::Buffer<>> wrapped_, outs_;
};

}  // namespace gsparse
