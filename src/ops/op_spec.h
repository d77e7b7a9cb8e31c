// Operator descriptions of the generalized sparse operators (DGL semantics).
//
//  g-SpMM   Z[v] = Φ_{(u -> v, e)} ( X[u] ⊕ Y[e] )      lhs X: source-node features, rhs Y: edge features
//           ⊕ ∈ {add, sub, mul, div, copy_lhs, copy_rhs}, Φ ∈ {sum, mean, max, min}.
//           A node with no in-edges gets 0; max/min also give, per output element, the source id
//           (arg_u) and edge id (arg_e) that produced it (-1 for nodes with no in-edges).
//  g-SDDMM  Z[e = (u -> v)] = lhs[t_l(e)] ⊕ rhs[t_r(e)]  each operand from the source node (u), the
//           destination node (v) or the edge (e); ⊕ ∈ {add, sub, mul, div, dot, copy_lhs, copy_rhs}.
//           dot reduces the last feature dimension.
#pragma once

#include <string>

namespace gsparse {

enum class BinaryOp { Add, Sub, Mul, Div, Dot, CopyLhs, CopyRhs };
enum class ReduceOp { Sum, Mean, Max, Min };
/// Where an operand of g-SDDMM comes from.
enum class OperandTarget { Src, Dst, Edge };

const char *binary_op_name(BinaryOp op);     ///< "add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"
const char *reduce_op_name(ReduceOp op);     ///< "sum", "mean", "max", "min"
const char *target_name(OperandTarget t);    ///< "u", "v", "e"
/// Parsers accept the names above (and "copy_u"/"copy_e" for SpMM); throw ShapeError otherwise.
BinaryOp parse_binary_op(const std::string &s);
ReduceOp parse_reduce_op(const std::string &s);
OperandTarget parse_target(const std::string &s);

bool uses_lhs(BinaryOp op);
bool uses_rhs(BinaryOp op);
bool has_arg_outputs(ReduceOp r);

struct SpmmSpec {
    BinaryOp op = BinaryOp::CopyLhs;
    ReduceOp reduce = ReduceOp::Sum;
    /// "u_mul_e_sum", "copy_u_max", ... (DGL's naming).
    std::string name() const;
};

struct SddmmSpec {
    BinaryOp op = BinaryOp::Dot;
    OperandTarget lhs = OperandTarget::Src;
    OperandTarget rhs = OperandTarget::Dst;
    /// "u_dot_v", "copy_e", ...
    std::string name() const;
};

/// Whether g-SpMM spec needs the edge id of each nonzero (to read edge features or report arg_e).
inline bool reads_edge_ids(const SpmmSpec &s) { return uses_rhs(s.op) || has_arg_outputs(s.reduce); }

/// Throws ShapeError for ops that are not defined for g-SpMM (dot).
void check_spmm_spec(const SpmmSpec &s);

}  // namespace gsparse
