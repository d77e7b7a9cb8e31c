// Tensor: a dense, contiguous, row-major n-d array of one DType on one device, either owning its
// memory or viewing memory that belongs to the caller (raw pointers from an application, PyTorch
// tensors). Operators take and return Tensors; shapes follow DGL: dimension 0 indexes nodes or
// edges, the remaining dimensions are feature dimensions that broadcast.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace gsparse {

enum class Device : uint8_t { CPU, CUDA };
const char *device_name(Device d);

class Tensor {
public:
    Tensor() = default;

    /// Owning, uninitialized CPU tensor.
    static Tensor empty(std::vector<int64_t> shape, DType dtype);
    /// Owning CPU tensor filled with zeros.
    static Tensor zeros(std::vector<int64_t> shape, DType dtype);
    /// Non-owning view of caller memory (contiguous, row-major). The memory must outlive the view.
    static Tensor wrap(void *data, std::vector<int64_t> shape, DType dtype, Device device = Device::CPU);
    /// Owning CPU tensor holding a copy of values; shape's product must equal values.size().
    template <typename T>
    static Tensor from_vector(const std::vector<T> &values, std::vector<int64_t> shape);

    bool defined() const { return data_ != nullptr || numel() == 0; }
    void *data() const { return data_; }
    template <typename T>
    T *data_as() const;

    const std::vector<int64_t> &shape() const { return shape_; }
    int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
    int64_t size(int64_t i) const;
    int64_t numel() const;
    /// Product of the sizes of dimensions 1..dim-1 (the feature length of one row).
    int64_t row_numel() const;
    DType dtype() const { return dtype_; }
    Device device() const { return device_; }
    size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

    /// "f32[2708, 8, 16]"
    std::string str() const;

private:
    std::shared_ptr<void> storage_;
    void *data_ = nullptr;
    std::vector<int64_t> shape_;
    DType dtype_ = DType::F32;
    Device device_ = Device::CPU;
};

/// "[2708, 8, 16]"
std::string shape_str(const std::vector<int64_t> &shape);

}  // namespace gsparse

#include "core/tensor_inl.h"
