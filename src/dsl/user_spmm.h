// User-written g-SpMM programs: a message of any Halide expression over node and edge operands,
// reduced over every node's in-edges by any monoid, compiled by gsparse without touching its
// sources.
//
//   gsparse::dsl::SpmmProgram p("weighted_max");
//   Halide::Expr x = p.operand("x", gsparse::dsl::At::Src);                 // x[u, f]
//   Halide::Expr w = p.operand("w", gsparse::dsl::At::Edge, /*broadcast=*/true);  // w[e, 0]
//   p.message(x * w);
//   p.reduce(gsparse::dsl::Monoid::max());
//   gsparse::dsl::SpmmKernel k = p.compile(/*features=*/16);
//   k.run(graph, {{"x", x_tensor}, {"w", w_tensor}}, out);   // out [num_dst, 16]
//
//   out[v, f] = finalize(reduce over in-edges e = (u -> v) of message(f, u, v, e), degree(v))
//   and 0 for nodes without in-edges.
//
// The program is a Halide pipeline over the sparse layout of graph/formats.h: a reduction domain
// over each row's ragged neighbour range [row_ptr(v), row_ptr(v + 1)), the source id col_idx(.) and
// the edge id edge_ids(.) of each position. The extension's ragged bound inference
// (halide_ext/ragged_bounds.h) bounds every access to those arrays and every gather through them,
// so a program needs no hand-written promises. Operands are [rows, features] tensors of the program's
// type (rows: num_src, num_dst or num_edges by where they are read), or [rows, 1] when broadcast.
//
// The kernel runs with the default schedule of user programs: rows in parallel, each row's
// reduction in order (CPU: one row per iteration of a parallel loop; CUDA: one thread per row and
// feature, compiled on the first run). It is correct for every monoid; the schedule space of
// built-in operators (schedules/) is not yet open to user programs.
#pragma once

#include <Halide.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "graph/graph.h"
#include "runtime/cuda_launch.h"

namespace gsparse::dsl {

/// Where an operand is read: at the message's source node u, destination node v or edge e.
enum class At { Src, Dst, Edge };

/// An associative reduction with its identity: acc = combine(acc, message), starting at identity.
struct Monoid {
    std::string name;
    std::function<Halide::Expr(Halide::Type)> identity;
    std::function<Halide::Expr(Halide::Expr acc, Halide::Expr x)> combine;

    static Monoid sum();
    static Monoid product();
    static Monoid max();  ///< identity: the type's lowest value
    static Monoid min();  ///< identity: the type's highest value
};

class SpmmKernel;

class SpmmProgram {
public:
    /// name: a C identifier naming the program in errors and kernel names; type: its feature type.
    explicit SpmmProgram(std::string name, Halide::Type type = Halide::Float(32));

    /// Declares operand `name` read at `at`; its value for the message's feature f (element 0 of
    /// each row when broadcast). Names are C identifiers, unique within the program.
    Halide::Expr operand(const std::string &name, At at, bool broadcast = false);
    /// The message's feature index f, source id u, destination id v, edge id e (Int(32)).
    Halide::Expr feature() const { return f_; }
    Halide::Expr src() const { return u_; }
    Halide::Expr dst() const { return v_; }
    Halide::Expr edge() const { return e_; }
    /// The in-degree of the message's destination (Int(32)); also what finalize receives.
    Halide::Expr degree() const { return degree_; }

    void message(Halide::Expr m);
    void reduce(Monoid r);
    /// out = finalize(acc, degree) for nodes with in-edges (default: acc itself). Mean is
    /// finalize = acc / degree.
    void finalize(std::function<Halide::Expr(Halide::Expr acc, Halide::Expr degree)> f);

    /// The program compiled for `features` output features on `device`. Throws ShapeError for an
    /// incomplete program (no message or reduction) and KernelError when Halide rejects it.
    SpmmKernel compile(int features, Device device = Device::CPU) const;

    const std::string &name() const { return name_; }

private:
    friend class SpmmKernel;
    struct Operand {
        std::string name;
        At at;
        bool broadcast;
        Halide::ImageParam param;
    };

    std::string name_;
    Halide::Type type_;
    Halide::ImageParam row_ptr_, col_idx_, edge_ids_;
    Halide::Param<int32_t> max_degree_, num_edges_, num_src_;
    Halide::Var f_{"f"}, v_{"v"};
    Halide::RDom k_;
    Halide::Expr u_, e_, degree_;
    std::vector<Operand> operands_;
    Halide::Expr message_;
    std::unique_ptr<Monoid> monoid_;
    std::function<Halide::Expr(Halide::Expr, Halide::Expr)> finalize_;
};

/// A compiled user program (see SpmmProgram::compile). Copies share the compiled pipeline.
class SpmmKernel {
public:
    /// out [num_dst, features] = the program on g; operands by name. Every declared operand must be
    /// given, with its rows (num_src, num_dst or num_edges) and features (1 when broadcast), on the
    /// kernel's device (CUDA tensors hold device pointers; the launch gives the context and
    /// stream, and the graph's arrays are copied to the device once per graph); ShapeError naming
    /// the operand otherwise.
    void run(const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
             const CudaLaunch &launch = {}) const;

    /// The lowered Halide statement (for tests and for users reading what was generated).
    std::string lowered_stmt() const;
    /// The target's assembly (PTX for Device::CUDA) of the program's kernel.
    std::string assembly() const;

private:
    friend class SpmmProgram;
    struct State;
    std::shared_ptr<State> state_;
};

}  // namespace gsparse::dsl
