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
// broadcast (rows: num_src, num_dst or num_edges). Default schedule: edges in parallel (CPU: tasks
// of 256 edges; CUDA: blocks of 256 edges x the features' threads, JIT-compiled on the first run;
// the graph's COO is copied to the device once per graph and context).
#pragma once

#include <Halide.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dsl/operands.h"
#include "graph/graph.h"
#include "graph/graph_view.h"
#include "runtime/cuda_launch.h"

namespace gsparse::dsl {

class SddmmKernel;
struct ProgramGradients;

class SddmmProgram {
public:
    /// name: a C identifier; type: the feature type (float32 or float64).
    explicit SddmmProgram(std::string name, Halide::Type type = Halide::Float(32));

    /// Declares operand `name` read at the edge's source, destination or the edge itself; its value
    /// at feature f (element 0 of each row when broadcast). Names are unique C identifiers.
    Halide::Expr operand(const std::string &name, At at, bool broadcast = false, const char *file = __builtin_FILE(),
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

    /// Compiled for `features` output features; ShapeError for an incomplete program, KernelError
    /// when Halide rejects it.
    SddmmKernel compile(int features, Device device = Device::CPU) const;

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

    /// The program as a static library for applications that link it without gsparse or a JIT:
    /// <dir>/<name>.a and <dir>/<name>.h, declaring
    ///   int name(halide_buffer_t *src_idx, halide_buffer_t *dst_idx, halide_buffer_t *<operand>...,
    ///            int32_t num_edges, int32_t num_src, int32_t num_dst, halide_buffer_t *out);
    /// the COO in edge-id order, operands in the order of their operand() calls, feature buffers
    /// [features or 1, rows] (the feature dimension first, dense), out [features, num_edges]. It
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

}  // namespace gsparse::dsl
