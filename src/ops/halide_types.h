// Mapping of gsparse DTypes to Halide types.
#pragma once

#include <Halide.h>

#include "core/dtype.h"
#include "core/error.h"

namespace gsparse {

inline Halide::Type halide_type(DType t) {
    switch (t) {
    case DType::F16: return Halide::Float(16);
    case DType::BF16: return Halide::BFloat(16);
    case DType::F32: return Halide::Float(32);
    case DType::F64: return Halide::Float(64);
    case DType::I32: return Halide::Int(32);
    case DType::I64: return Halide::Int(64);
    case DType::Bool: return Halide::UInt(8);
    }
    return Halide::Float(32);
}

/// Feature dtypes the operator kernels are generated for today.
inline void check_feature_dtype(DType t) {
    if (t != DType::F32 && t != DType::F64)
        fail<ShapeError>("feature dtype ", dtype_name(t), " is not supported yet (supported: f32, f64)");
}

}  // namespace gsparse
