// Symbolic differentiation of a scalar Halide expression with respect to one of its variables: the
// forward-mode rules of +, -, *, /, min, max, select, casts, lets and the math functions Halide
// lowers to externs (exp, log, sqrt, tanh, sin, cos, pow, abs, ...). Integer-valued
// subexpressions (comparisons, casts to integers, floor / round) are piecewise constant and
// contribute nothing. The derived backward of user programs (dsl/user_gradients.h) builds its
// messages with it.
#pragma once

#include <Halide.h>

#include <string>

namespace gsparse::dsl {

/// d e / d var, simplified (var: the name of a Variable in e). ShapeError naming the operation
/// when e holds one without a rule here (an unknown extern call, a reduction, an image read).
Halide::Expr differentiate(const Halide::Expr &e, const std::string &var);

}  // namespace gsparse::dsl
