// Element types of feature tensors and index arrays. fp32 features and int32 indices are what every
// kernel supports today; the other codes exist so that the operator descriptions, cache keys and
// tensor type already carry the type and further kernels can be added without changing interfaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gsparse {

/// Bool: one byte of 0 or 1 per entry (PyTorch's bool), for masks the graph builds write.
enum class DType : uint8_t { F16, BF16, F32, F64, I32, I64, Bool };

size_t dtype_size(DType t);
const char *dtype_name(DType t);
/// Parses "f32", "float32", "f64", "i32", ... ; throws ShapeError on an unknown name.
DType parse_dtype(const std::string &name);
bool is_float(DType t);

template <typename T>
struct dtype_of;
template <>
struct dtype_of<float> {
    static constexpr DType value = DType::F32;
};
template <>
struct dtype_of<double> {
    static constexpr DType value = DType::F64;
};
template <>
struct dtype_of<int32_t> {
    static constexpr DType value = DType::I32;
};
template <>
struct dtype_of<int64_t> {
    static constexpr DType value = DType::I64;
};

}  // namespace gsparse
