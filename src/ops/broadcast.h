// Feature-shape broadcasting (DGL rules) and its canonical form for code generation.
//
// Operands have a leading node/edge dimension followed by feature dimensions. Feature shapes
// broadcast numpy-style after left-padding with 1s (node features N x H x F with edge weights
// E x H x 1 give N x H x F). For dot, the last dimensions must be equal and are reduced; the output
// feature shape is the broadcast of the rest followed by 1. copy_lhs / copy_rhs take one operand's
// shape.
//
// The canonical form drops size-1 output dimensions and merges adjacent dimensions in which each
// operand either varies in both or is constant in both. Merging is exact for contiguous row-major
// memory, so an operator is compiled once per broadcast *pattern* and never materializes index maps:
// a kernel for (N x 8 x 16, E x 8 x 1) has two canonical dims, [16 (lhs only), 8 (both)].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_spec.h"

namespace gsparse {

struct FeatureLayout {
    /// DGL feature shape of the output (without the leading node/edge dimension).
    std::vector<int64_t> out_shape;
    /// Canonical dimensions, innermost first (Halide order); never empty (a scalar feature is [1]).
    std::vector<int64_t> extents;
    std::vector<bool> lhs_varies, rhs_varies;
    /// dot: length of the reduced (innermost) dimension of both operands; 0 for other ops.
    int64_t reduce_len = 0;

    int rank() const { return static_cast<int>(extents.size()); }
    /// Product of the output feature shape.
    int64_t out_len() const;
    /// Feature extents of the operand buffers, innermost first ([reduce_len] + canonical dims with 1
    /// where the operand is constant).
    std::vector<int64_t> lhs_extents() const;
    std::vector<int64_t> rhs_extents() const;
    /// A compact description for cache keys and logs, e.g. "16:l.8:lr" or "dot64|1:lr".
    std::string key() const;
};

/// Computes the layout of op applied to operands with the given feature shapes (dims 1.. of the
/// tensors). Throws ShapeError naming both shapes when they do not broadcast.
FeatureLayout plan_features(BinaryOp op, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat);

/// plan_features where the operand op does not read (copy_lhs / copy_rhs) may be given empty: it
/// takes the shape of the one op reads.
FeatureLayout plan_op_features(BinaryOp op, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat);

}  // namespace gsparse
