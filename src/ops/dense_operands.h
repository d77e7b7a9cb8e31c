// Declarations on the operand ImageParams of an operator's algorithm that let schedules use vector
// loads: dense row-major layout with constant strides (the feature extents are known when a kernel
// is compiled), and the byte alignment a schedule assumes for the operands' rows.
#pragma once

#include <Halide.h>

#include <initializer_list>
#include <vector>

namespace gsparse {

/// p (feature dims innermost first, then the node/edge dim) starts at 0 and is dense with these
/// feature extents, so the compiler can prove the alignment of loads along the features.
inline void declare_dense_operand(Halide::ImageParam &p, const std::vector<int64_t> &feature_extents) {
    int64_t stride = 1;
    for (size_t d = 0; d <= feature_extents.size(); d++) {
        Halide::Internal::Dimension dim = p.dim(static_cast<int>(d));
        dim.set_min(0);
        if (d > 0) dim.set_stride(static_cast<int>(stride));
        if (d < feature_extents.size()) {
            dim.set_extent(static_cast<int>(feature_extents[d]));
            stride *= feature_extents[d];
        }
    }
}

/// Lets the compiler assume the operands' data is aligned to bytes; returns bytes (the runtime
/// refuses pointers that are not, see check_operand_alignment).
inline int assume_operand_alignment(std::initializer_list<Halide::ImageParam *> operands, int bytes) {
    for (Halide::ImageParam *p : operands) p->set_host_alignment(bytes);
    return bytes;
}

}  // namespace gsparse
