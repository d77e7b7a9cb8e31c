// The user program most tests of user schedules run, x_u * w_e + y_v (a source operand, a broadcast
// edge weight and a destination operand), and the same as plain loops over the CSR.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "core/tensor.h"
#include "dsl/user_spmm.h"
#include "graph/graph.h"

namespace gsparse::test {

/// x_u * w_e + y_v reduced by m.
inline dsl::SpmmProgram weighted_program(const std::string &name, dsl::Monoid m) {
    dsl::SpmmProgram p(name);
    Halide::Expr x = p.operand("x", dsl::At::Src);
    Halide::Expr w = p.operand("w", dsl::At::Edge, true);
    Halide::Expr y = p.operand("y", dsl::At::Dst);
    p.message(x * w + y);
    p.reduce(std::move(m));
    return p;
}

/// weighted_program's result as plain loops over the CSR (sum, or max), 0 on rows without in-edges.
inline Tensor weighted_reference(const Graph &g, int F, const Tensor &x, const Tensor &w, const Tensor &y, bool max) {
    const CSR &csr = g.csr();
    Tensor out = Tensor::zeros({csr.num_rows, F}, DType::F32);
    for (int64_t v = 0; v < csr.num_rows; ++v) {
        if (csr.row_length(v) == 0) continue;
        for (int f = 0; f < F; ++f) {
            double acc = max ? -INFINITY : 0.0;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p) {
                const double m = double(x.data_as<float>()[csr.col_idx[p] * F + f]) * w.data_as<float>()[csr.edge_id(p)] +
                                 double(y.data_as<float>()[v * F + f]);
                acc = max ? std::max(acc, m) : acc + m;
            }
            out.data_as<float>()[v * F + f] = static_cast<float>(acc);
        }
    }
    return out;
}

}  // namespace gsparse::test
