// Plain C++ reference implementations of g-SpMM and g-SDDMM, written independently of the Halide
// algorithms (own broadcasting, loops in CSR order) to check every generated kernel. Messages are
// computed in the inputs' dtype, exactly as kernels do; sums accumulate in double. Results are
// returned in double together with the magnitude Σ|message| of every sum, from which tests derive
// a relative tolerance.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "graph/graph.h"
#include "ops/op_spec.h"

namespace gsparse {

struct ReferenceResult {
    std::vector<int64_t> shape;        ///< full output shape (rows/edges first)
    std::vector<double> out;           ///< output values, row-major
    std::vector<double> magnitude;     ///< Σ|message| per output element (sum/mean/dot), else |out|
    std::vector<int32_t> arg_u, arg_e; ///< max/min only
};

/// lhs: num_src x ... (may be undefined for copy_rhs); rhs: num_edges x ... (undefined for copy_lhs).
ReferenceResult reference_spmm(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs);
ReferenceResult reference_sddmm(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs);

}  // namespace gsparse
