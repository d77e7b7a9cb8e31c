// The arguments of a load of a broadcast operand in the operators' algorithms.
#pragma once

#include <Halide.h>

#include <vector>

namespace gsparse {

/// (f..., row) for an operand whose feature dimension i varies where varies[i] and is broadcast
/// (read at 0) elsewhere; f are the algorithm's feature Vars, innermost first.
inline std::vector<Halide::Expr> operand_args(const std::vector<Halide::Var> &f, const std::vector<bool> &varies,
                                              const Halide::Expr &row) {
    std::vector<Halide::Expr> args;
    for (size_t i = 0; i < f.size(); i++) args.push_back(varies[i] ? Halide::Expr(f[i]) : Halide::Expr(0));
    args.push_back(row);
    return args;
}

}  // namespace gsparse
