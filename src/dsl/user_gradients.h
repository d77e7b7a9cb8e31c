// The backward of a user g-SpMM program, derived from its message: for a program that sums its
// message over each node's in-edges (Monoid::sum, optionally with a finalize that is linear in the
// sum, such as a mean), the gradient of every operand is again a user program, built here by
// differentiating the message symbolically (dsl/differentiate.h).
//
//   out[v, f] = fin(acc[v, f], deg(v)),   acc[v, f] = sum over in-edges e = (u -> v) of m(f, u, v, e)
//   G[v, f]   = grad_out[v, f] * dfin/dacc(deg(v))                       (the `scale` program)
//   d op_dst[v, f]  = sum over in-edges of v        of G[v, f] * dm/d op_dst    (g-SpMM, same graph)
//   d op_src[u, f]  = sum over out-edges of u       of G[v, f] * dm/d op_src    (g-SpMM, reverse graph)
//   d op_edge[e, f] = G[v, f] * dm/d op_edge                                    (per-edge program)
//
// A broadcast operand ([rows, 1]) gets the sum over f of its program's output, an operand of
// columns (Columns) the sum over the features f that read each column. The programs read
// the forward operands they need by the same names, and G as the operand `grad_operand`.
//
// A program that takes the maximum (Monoid::max) or minimum (Monoid::min) of its message, without a
// finalize, passes G to the one in-edge whose message won, per row and feature:
//   W[v, f]        = the smallest edge id e into v with m(f, u, v, e) = out[v, f]      (ProgramGradients::row_values)
//   d op_dst[v, f] = sum over in-edges e of v  of [e = W[v, f]] G[v, f] * dm/d op_dst
//   d op_src[u, f] = sum over out-edges e of u of [e = W[v, f]] G[v, f] * dm/d op_src
//   d op_edge[e, f] = [e = W[v, f]] G[v, f] * dm/d op_edge
// (a subgradient: with several equal maxima, the first edge takes it all, as DGL's max does, where
// PyTorch's scatter_reduce("amax") shares it among them). The winners come from their own pass over
// the edges, so the forward keeps nothing for the backward.
//
// A product (Monoid::product, no finalize) weighs G by the product of the row's other messages:
//   P[v, f], Z[v, f] = the product of the nonzero messages into v and the number of zero ones
//   d op[..]         = [as for a sum, with G[v, f] * dm/d op replaced by]
//                      G[v, f] * dm/d op * (Z = 0: P / m;  Z = 1 and m = 0: P;  else 0)
// (exact with zero messages; P / m loses what dividing loses when |m| is tiny against P).
//
// A message that reads the node or edge ids (src(), dst(), edge(), degree()) or a reduction other
// than sum, max, min and product has no derived backward: ShapeError naming why (give the backward
// yourself, gsparse.user_op).
// Per-edge programs (dsl/user_sddmm.h) get the same, with G read at the edge.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"

namespace gsparse::dsl {

/// How one operand's gradient is computed.
struct OperandGradient {
    enum class Form {
        Rows,         ///< g-SpMM program on the graph itself (operands read at the destination)
        ReverseRows,  ///< g-SpMM program on the reverse graph (operands read at the source)
        Edges,        ///< per-edge program on the graph (operands read at the edge)
    };
    std::string operand;     ///< the forward operand
    At at = At::Src;         ///< where the forward reads it
    bool broadcast = false;  ///< sum the program's features to get the [rows, 1] gradient
    /// Declared with Columns: sum the program's features by the column each reads (the forward
    /// program's column_map) to get the [rows, columns] gradient; 0 otherwise.
    int columns = 0;
    Form form = Form::Rows;
    std::shared_ptr<SpmmProgram> rows;    ///< Rows and ReverseRows
    std::shared_ptr<SddmmProgram> edges;  ///< Edges
};

/// The derived backward of a program (see the header comment).
struct ProgramGradients {
    std::string grad_operand;            ///< the name under which the programs read G
    std::shared_ptr<SpmmProgram> scale;  ///< dfin/dacc per destination row; null without a finalize
    std::vector<OperandGradient> operands;  ///< one per forward operand, in declaration order
    /// What a max, min or product program's operand programs read per destination row and feature,
    /// computed first by this program (the forward's message and operands, one pass over the edges;
    /// null for a sum), each output [num_dst, F] read as the operand row_value_operands[i] (at the
    /// destination, or at the source of the reverse graph); 0 on rows without in-edges:
    ///   max / min ("winner"): the id of the edge whose message is the row's maximum (minimum; among
    ///     equal messages the smallest edge id), an integer stored as the bits of the feature type
    ///     (float32: int32, float64: int64); G goes to that edge only;
    ///   product ("product", "zeros"): the product of the row's nonzero messages and the number of
    ///     zero ones; G is weighed by the product of the other messages.
    std::shared_ptr<SpmmProgram> row_values;
    std::vector<std::string> row_value_operands;
};

/// The derived backward of program; ShapeError naming why a program has none.
ProgramGradients derive_gradients(const SpmmProgram &program);

/// The derived backward of a per-edge program, out[e, f] = value(f, u, v, e): G is the output's
/// gradient itself (read at the edge, no scale); an operand read at the source gets
/// sum over u's out-edges of G[e, f] * dvalue/d op_src (g-SpMM on the reverse graph), one read at the
/// destination the same over v's in-edges (g-SpMM on the graph), one read at the edge
/// G[e, f] * dvalue/d op_edge (per-edge). ShapeError naming why a program has none.
ProgramGradients derive_gradients(const SddmmProgram &program);

}  // namespace gsparse::dsl
