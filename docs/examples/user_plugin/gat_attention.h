// GAT's attention aggregation as one user program (docs/dsl.md), shared by the example plugin
// (weighted_max_plugin.cpp), the user-program example and the tests:
//   out[v] = sum over in-edges of softmax_v(s) x[u],   s = leaky_relu(a_src[u] + a_dst[v], 0.2),
// in one pass over each row. The messages (s, x[u]) are reduced by an online softmax, a monoid
// over tuples: (running maximum m, normaliser d, weighted sum y), d and y rescaled by
// exp(m_old - m_new) as the maximum grows, so exp never overflows; finalize divides (rows without
// in-edges give 0).
#pragma once

#include <string>

#include "dsl/user_spmm.h"

namespace gsparse_examples {

/// The online softmax over messages (score, value): accumulates (max score, normaliser, weighted sum).
inline gsparse::dsl::Monoid online_softmax() {
    gsparse::dsl::Monoid online;
    online.name = "online_softmax";
    online.identity_values = [](Halide::Type t) {
        return Halide::Tuple(t.min(), Halide::cast(t, 0), Halide::cast(t, 0));
    };
    online.combine_values = [](const Halide::Tuple &acc, const Halide::Tuple &msg) {
        Halide::Expr m = Halide::max(acc[0], msg[0]);
        Halide::Expr keep = Halide::exp(acc[0] - m), take = Halide::exp(msg[0] - m);
        return Halide::Tuple(m, acc[1] * keep + take, acc[2] * keep + take * msg[1]);
    };
    return online;
}

/// The program: operands x [num_src, F], a_src [num_src, 1], a_dst [num_dst, 1].
inline gsparse::dsl::SpmmProgram gat_attention(const std::string &name = "gat_attention") {
    using gsparse::dsl::At;
    gsparse::dsl::SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
    p.message(Halide::Tuple(Halide::select(s > 0, s, 0.2f * s), x));
    p.reduce(online_softmax());
    p.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[2] / acc[1]; });
    return p;
}

}  // namespace gsparse_examples
