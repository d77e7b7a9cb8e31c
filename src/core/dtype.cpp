#include "core/dtype.h"

#include "core/error.h"

namespace gsparse {

size_t dtype_size(DType t) {
    switch (t) {
    case DType::Bool: return 1;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F64:
    case DType::I64: return 8;
    }
    return 0;
}

const char *dtype_name(DType t) {
    switch (t) {
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
    }
    return "?";
}

DType parse_dtype(const std::string &name) {
    if (name == "f16" || name == "float16" || name == "half") return DType::F16;
    if (name == "bf16" || name == "bfloat16") return DType::BF16;
    if (name == "f32" || name == "float32" || name == "float") return DType::F32;
    if (name == "f64" || name == "float64" || name == "double") return DType::F64;
    if (name == "i32" || name == "int32") return DType::I32;
    if (name == "i64" || name == "int64") return DType::I64;
    if (name == "bool") return DType::Bool;
    fail<ShapeError>("unknown dtype '", name, "' (expected f16, bf16, f32, f64, i32, i64 or bool)");
}

bool is_float(DType t) {
    return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}

}  // namespace gsparse
