// The built-in generalized sparse operators (ops/op_spec.h, DGL semantics) written as user programs
// (dsl/user_spmm.h, dsl/user_sddmm.h): the same algorithms through the public DSL, for schedules of
// their own and to check that the DSL expresses them.
//
//   spmm_program({Mul, Sum}, {8, 16}, {8, 1})   out[v, h * 16 + d] = sum over in-edges e = (u -> v)
//                                               of lhs[u, h * 16 + d] * rhs[e, h]
//
// Feature shapes broadcast by DGL's rules (ops/broadcast.h); the output's features are flattened
// row-major (F = the product of its shape), and an operand that broadcasts over some of them is
// declared with Columns: the column each output feature reads is its index in the operand's own
// row-major shape (an operand constant over every feature is declared broadcast). mean is the sum
// finalized by the in-degree; max and min give the values only (the built-in operator's arg ids are
// outputs of another type, which user programs do not have).
#pragma once

#include <cstdint>
#include <vector>

#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"
#include "ops/op_spec.h"

namespace gsparse::dsl {

/// The g-SpMM operator spec on operands of these feature shapes (dims 1.. of the tensors: lhs at the
/// source, "lhs"; rhs at the edge, "rhs"; the one the operator does not read may be empty), named
/// by spec.name() ("u_mul_e_sum"). ShapeError for shapes that do not broadcast or for dot.
SpmmProgram spmm_program(const SpmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                         const std::vector<int64_t> &rhs_feat, Halide::Type type = Halide::Float(32));

/// The g-SDDMM operator spec likewise as a per-edge program (lhs and rhs read at spec's targets);
/// ShapeError for dot (a reduction over features, which a per-edge program's value does not hold).
SddmmProgram sddmm_program(const SddmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                           const std::vector<int64_t> &rhs_feat, Halide::Type type = Halide::Float(32));

/// The output feature count F of either program (the product of the broadcast output shape).
int64_t program_features(BinaryOp op, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat);

}  // namespace gsparse::dsl
