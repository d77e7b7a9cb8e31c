// The binary operators ⊕ as Halide expressions.
#pragma once

#include <Halide.h>

#include "ops/op_spec.h"

namespace gsparse {

/// lhs ⊕ rhs for every op but dot (which is a reduction, built by the SDDMM algorithm).
inline Halide::Expr apply_binary(BinaryOp op, const Halide::Expr &lhs, const Halide::Expr &rhs) {
    switch (op) {
    case BinaryOp::Add: return lhs + rhs;
    case BinaryOp::Sub: return lhs - rhs;
    case BinaryOp::Mul: return lhs * rhs;
    case BinaryOp::Div: return lhs / rhs;
    case BinaryOp::CopyLhs: return lhs;
    case BinaryOp::CopyRhs: return rhs;
    case BinaryOp::Dot: return lhs * rhs;
    }
    return lhs;
}

}  // namespace gsparse
