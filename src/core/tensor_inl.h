// Template members of Tensor.
#pragma once

#include <cstring>

#include "core/error.h"

namespace gsparse {

template <typename T>
Tensor Tensor::from_vector(const std::vector<T> &values, std::vector<int64_t> shape) {
    Tensor t = empty(std::move(shape), dtype_of<T>::value);
    if (static_cast<size_t>(t.numel()) != values.size())
        fail<ShapeError>("from_vector: shape ", shape_str(t.shape()), " holds ", t.numel(),
                         " elements but ", values.size(), " values were given");
    if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
    return t;
}

template <typename T>
T *Tensor::data_as() const {
    if (dtype_of<T>::value != dtype_)
        fail<ShapeError>("tensor ", str(), " accessed as ", dtype_name(dtype_of<T>::value));
    return static_cast<T *>(data_);
}

}  // namespace gsparse
