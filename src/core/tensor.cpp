#include "core/tensor.h"

#include <cstdlib>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace gsparse {

const char *device_name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }

std::string shape_str(const std::vector<int64_t> &shape) {
    std::ostringstream os;
    os << '[';
    for (size_t i = 0; i < shape.size(); i++) os << (i ? ", " : "") << shape[i];
    os << ']';
    return os.str();
}

static int64_t checked_numel(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t s : shape) {
        if (s < 0) fail<ShapeError>("negative size in shape ", shape_str(shape));
        if (s != 0 && n > std::numeric_limits<int64_t>::max() / s)
            fail<ShapeError>("shape ", shape_str(shape), " overflows int64");
        n *= s;
    }
    return n;
}

Tensor Tensor::empty(std::vector<int64_t> shape, DType dtype) {
    Tensor t;
    size_t bytes = static_cast<size_t>(checked_numel(shape)) * dtype_size(dtype);
    // 64-byte alignment keeps vector loads aligned at row starts of power-of-two feature lengths.
    size_t padded = (bytes + 63) / 64 * 64;
    void *p = padded ? std::aligned_alloc(64, padded) : nullptr;
    if (padded && !p) fail<Error>("out of memory allocating ", bytes, " bytes for tensor ", shape_str(shape));
    t.storage_ = std::shared_ptr<void>(p, [](void *q) { std::free(q); });
    t.data_ = p;
    t.shape_ = std::move(shape);
    t.dtype_ = dtype;
    return t;
}

Tensor Tensor::zeros(std::vector<int64_t> shape, DType dtype) {
    Tensor t = empty(std::move(shape), dtype);
    if (t.nbytes()) std::memset(t.data(), 0, t.nbytes());
    return t;
}

Tensor Tensor::wrap(void *data, std::vector<int64_t> shape, DType dtype, Device device) {
    Tensor t;
    int64_t n = checked_numel(shape);
    if (!data && n > 0) fail<ShapeError>("null data pointer for a tensor of shape ", shape_str(shape));
    t.data_ = data;
    t.shape_ = std::move(shape);
    t.dtype_ = dtype;
    t.device_ = device;
    return t;
}

int64_t Tensor::size(int64_t i) const {
    if (i < 0) i += dim();
    if (i < 0 || i >= dim()) fail<ShapeError>("dimension ", i, " out of range for tensor ", str());
    return shape_[static_cast<size_t>(i)];
}

int64_t Tensor::numel() const {
    int64_t n = 1;
    for (int64_t s : shape_) n *= s;
    return n;
}

int64_t Tensor::row_numel() const {
    int64_t n = 1;
    for (size_t i = 1; i < shape_.size(); i++) n *= shape_[i];
    return n;
}

std::string Tensor::str() const { return std::string(dtype_name(dtype_)) + shape_str(shape_); }

}  // namespace gsparse
