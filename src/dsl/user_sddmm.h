// User-written g-SDDMM programs: one value per edge from any Halide expression over the operands of
// the edge's source node, destination node and the edge itself.
//
//   gsparse::dsl::SddmmProgram s("gat_scores");
//   Halide::Expr a = s.operand("a_src", gsparse::dsl::At::Src) + s.operand("a_dst", gsparse::dsl::At::Dst);
//   s.edge_value(Halide::select(a > 0, a, 0.2f * a));
//   gsparse::dsl::SddmmKernel k = s.compile(/*features=*/4);
//   k.run(graph, {{"a_src", as}, {"a_dst", ad}}, out);      // out [num_edges, 4], by edge id
//
//   out[e, f] = value(f, u, v, e)   for every edge e = (u -> v), in edge-id order
//
// The program is a Halide pipeline over the graph's COO in edge-id order (src_idx(e), dst_idx(e));
// the extension's ragged bound inference bounds the gathers through them (no hand-written
// promises). Operands are [rows, features] tensors of the program's type, or [rows, 1] when
// broadcast (rows: num_src, num_dst or num_edges). Schedules are EdgeScheduleDefs: knobs with
// choices, defaults and a validity rule, and directives over out(f, e); default_edge_schedule()
// runs edges in parallel (CPU: tasks of 256 edges; CUDA: blocks of 256 threads over features and
// edges, JIT-compiled on the first run; the graph's COO is copied to the device once per graph and
// context), and search_schedule measures every valid point of a schedule on a graph.
#pragma once

#include <Halide.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dsl/operands.h"
#include "dsl/schedule_knobs.h"
#include "graph/graph.h"
#include "graph/graph_view.h"
#include "runtime/cuda_launch.h"

namespace gsparse::dsl {

class SddmmKernel;
struct ProgramGradients;

/// What a schedule of a per-edge program works on: the output Func out(f, e) (one value per edge e
/// and feature f, a pure definition: nothing to reduce), the device, the feature count, the
/// program's element type and the chosen knob values.
struct EdgeScheduleContext : KnobValues {
    Halide::Func out;  ///< out(f, e)
    Halide::Var f, e;  ///< feature and edge (by edge id)
    Device device = Device::CPU;
    int features = 0;
    Halide::Type type;
};

/// A schedule for per-edge programs: knobs (KnobSpace: choices, defaults, validity rule) and the
/// directives. Points are checked before apply runs. A schedule changes how the edges are
/// computed, never what: every point gives the program's values.
struct EdgeScheduleDef : KnobSpace {
    std::function<void(EdgeScheduleContext &)> apply;
};

/// The default schedule of per-edge programs (edge_default). CPU: edges_per_task (edges of one
/// parallel task) and vector_width (features computed together). CUDA: feature_tile (threads over
/// features; 0: the feature count, at most 32), block_threads (threads of a block: block_threads /
/// feature_tile edges at once), edges_per_thread (edges a thread computes, block_threads /
/// feature_tile apart so that a warp's stores stay together; unrolled) and feature_vector (features
/// a thread computes, vectorized; a divisor of the feature count, at most feature_tile x
/// feature_vector features a block's row).
const EdgeScheduleDef &default_edge_schedule();

class SddmmProgram {
public:
    /// name: a C identifier; type: the feature type (float32 or float64).
    explicit SddmmProgram(std::string name, Halide::Type type = Halide::Float(32));

    /// Declares operand `name` read at the edge's source, destination or the edge itself; its value
    /// at feature f (element 0 of each row when broadcast). Names are unique C identifiers.
    Halide::Expr operand(const std::string &name, At at, bool broadcast = false, const char *file = __builtin_FILE(),
                         int line = __builtin_LINE());
    /// Declares operand `name` of columns.count columns ([rows, count]) read at column columns.at for
    /// feature f (SpmmProgram::operand with Columns).
    Halide::Expr operand(const std::string &name, At at, const Columns &columns, const char *file = __builtin_FILE(),
                         int line = __builtin_LINE());
    Halide::Expr feature() const { return f_; }
    Halide::Expr src() const { return u_; }
    Halide::Expr dst() const { return v_; }
    Halide::Expr edge() const { return e_; }

    /// The value of edge e at feature f.
    /// (`file` and `line`: the caller's, for errors about the value.)
    void edge_value(Halide::Expr value, const char *file = __builtin_FILE(), int line = __builtin_LINE());

    const std::string &name() const { return name_; }
    Halide::Type type() const { return type_; }
    /// The declared operands, in declaration order.
    std::vector<OperandInfo> operands() const;
    /// The column each feature f < features reads of operand `name`, declared with Columns (empty
    /// for an operand declared without); ShapeError as compile() gives it for a column outside the
    /// operand, or for an operand the program does not declare.
    std::vector<int32_t> column_map(const std::string &name, int features) const;

    /// Compiled for `features` output features under `schedule` at `point` (knobs left out take
    /// their defaults); ShapeError for an incomplete program, ScheduleError for a point the schedule
    /// does not take or directives Halide rejects, KernelError when compilation fails.
    SddmmKernel compile(int features, Device device = Device::CPU,
                        const EdgeScheduleDef &schedule = default_edge_schedule(), const SchedulePoint &point = {}) const;

private:
    friend ProgramGradients derive_gradients(const SddmmProgram &program);  // dsl/user_gradients.h
    std::string name_;
    Halide::Type type_;
    Halide::ImageParam src_idx_, dst_idx_;
    Halide::Param<int32_t> num_edges_, num_src_, num_dst_;
    Halide::Var f_{"f"}, e_{"e"};
    Halide::Expr u_, v_;
    std::vector<Operand> operands_;
    Halide::Expr value_;
    Site value_site_;  ///< where edge_value() was called
};

class SddmmKernel {
public:
    /// out [num_edges, features] (rows by edge id) = the program on g, operands by name (tensors on
    /// the program's device, every declared operand with its rows and features); ShapeError naming
    /// a problem. On CUDA the launch gives the context and stream (required), as for g-SpMM programs.
    void run(const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
             const CudaLaunch &launch = {}) const;
    /// The same on a graph view's COO in edge-id order (graph/graph_view.h: coo_src, coo_dst) on
    /// the program's device; GraphError for a view without its COO or on another device.
    void run(const GraphView &g, const std::map<std::string, Tensor> &operands, Tensor &out,
             const CudaLaunch &launch = {}) const;
    std::string lowered_stmt() const;
    std::string assembly() const;
    /// The schedule point the kernel was compiled at, as text (point_str).
    const std::string &schedule() const;

    /// The program as a static library for applications that link it without gsparse or a JIT:
    /// <dir>/<name>.a and <dir>/<name>.h, declaring
    ///   int name(halide_buffer_t *src_idx, halide_buffer_t *dst_idx, halide_buffer_t *<operand>...,
    ///            int32_t num_edges, int32_t num_src, int32_t num_dst, halide_buffer_t *out);
    /// the COO in edge-id order, operands in the order of their operand() calls, feature buffers
    /// [width, rows] (width: features, 1 when broadcast, or the operand's Columns; the feature dimension first, dense), out [features, num_edges]. It
    /// returns 0 or a Halide error code. name must be a C identifier.
    void compile_to_static_library(const std::string &dir, const std::string &name) const;
    /// The argument names of that function, in order (the output last).
    std::vector<std::string> argument_names() const;

private:
    friend class SddmmProgram;
    struct State;
    struct Coo;
    void run_on(const Coo &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                const CudaLaunch &launch) const;
    std::shared_ptr<State> state_;
};

/// Measures every valid point of `schedule` for the program on g with these operands (runs timed
/// runs after one warm-up each, median), fastest first. `sync` waits for the device (required for
/// CUDA: it must wait for the launch's stream; unused on the CPU). out receives the last result.
std::vector<MeasuredPoint> search_schedule(const SddmmProgram &program, const EdgeScheduleDef &schedule, int features,
                                           Device device, const Graph &g,
                                           const std::map<std::string, Tensor> &operands, Tensor &out,
                                           const CudaLaunch &launch = {}, int runs = 10,
                                           const std::function<void()> &sync = nullptr);

/// The same over the given points of `schedule` only, fastest first; ScheduleError for a point the
/// schedule does not take.
std::vector<MeasuredPoint> measure_points(const SddmmProgram &program, const EdgeScheduleDef &schedule,
                                          const std::vector<SchedulePoint> &points, int features, Device device,
                                          const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                                          const CudaLaunch &launch = {}, int runs = 10,
                                          const std::function<void()> &sync = nullptr);

}  // namespace gsparse::dsl
