// GAT's attention aggregation as one user program over a tuple monoid (the CPU and GPU tests share
// it): messages (leaky_relu(a_src[u] + a_dst[v]), x[u]) reduced into (running maximum score,
// normaliser, weighted sum), rescaled as the maximum grows; finalize divides.
#pragma once

#include <string>

#include "dsl/user_spmm.h"

namespace gsparse::test {

inline dsl::SpmmProgram one_pass_attention(const std::string &name) {
    using dsl::At;
    dsl::SpmmProgram p(name);
    Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
    p.message(Halide::Tuple(Halide::select(s > 0, s, 0.2f * s), p.operand("x", At::Src)));
    dsl::Monoid online;
    online.name = "online_softmax";
    online.identity_values = [](Halide::Type t) {
        return Halide::Tuple(t.min(), Halide::cast(t, 0), Halide::cast(t, 0));
    };
    online.combine_values = [](const Halide::Tuple &acc, const Halide::Tuple &msg) {
        Halide::Expr m = Halide::max(acc[0], msg[0]);
        Halide::Expr keep = Halide::exp(acc[0] - m), take = Halide::exp(msg[0] - m);
        return Halide::Tuple(m, acc[1] * keep + take, acc[2] * keep + take * msg[1]);
    };
    p.reduce(online);
    p.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[2] / acc[1]; });
    return p;
}

}  // namespace gsparse::test
