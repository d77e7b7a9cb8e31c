// Views of gsparse memory as Halide buffers (no copies). Feature tensors are viewed in the canonical
// layout of their operator (innermost feature dim first, node/edge dim last).
#pragma once

#include <Halide.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "graph/formats.h"
#include "ops/halide_types.h"

namespace gsparse {

inline std::vector<int> halide_sizes(const std::vector<int64_t> &feature_extents, int64_t rows) {
    std::vector<int> sizes;
    for (int64_t e : feature_extents) {
        if (e > INT32_MAX) fail<ShapeError>("feature dimension of ", e, " elements exceeds INT32_MAX");
        sizes.push_back(static_cast<int>(e));
    }
    if (rows > INT32_MAX) fail<ShapeError>("tensor with ", rows, " rows exceeds INT32_MAX");
    sizes.push_back(static_cast<int>(rows));
    return sizes;
}

/// t viewed with the given canonical feature extents (their product must equal t.row_numel()).
inline Halide::Buffer<> feature_buffer(const Tensor &t, const std::vector<int64_t> &feature_extents,
                                       const char *name) {
    int64_t len = 1;
    for (int64_t e : feature_extents) len *= e;
    if (len != t.row_numel())
        fail<ShapeError>(name, " tensor ", t.str(), " does not match the kernel's feature length ", len);
    return Halide::Buffer<>(halide_type(t.dtype()), t.data(), halide_sizes(feature_extents, t.size(0)), name);
}

/// Throws ShapeError unless the data of operand t is aligned to bytes (0: no requirement), as the
/// vector loads of schedule assume.
inline void check_operand_alignment(const Tensor &t, int bytes, const char *name, const std::string &schedule) {
    if (bytes > 0 && reinterpret_cast<uintptr_t>(t.data()) % static_cast<uintptr_t>(bytes) != 0)
        fail<ShapeError>(name, " ", t.str(), " is not ", bytes, "-byte aligned, which schedule ", schedule,
                         " assumes for its vector loads");
}

inline Halide::Buffer<> index_buffer(const std::vector<index_t> &v, const char *name) {
    return Halide::Buffer<>(Halide::Int(32), const_cast<index_t *>(v.data()), {static_cast<int>(v.size())}, name);
}

/// The device address of an index array on a GPU (a buffer of the device graph copies), for views.
inline const index_t *device_index_ptr(const Halide::Buffer<> &b) {
    return reinterpret_cast<const index_t *>(static_cast<uintptr_t>(b.raw_buffer()->device));
}

}  // namespace gsparse
