// DeviceBuffer<T>: an owning, move-only array of T in CUDA device memory (cudaMalloc / cudaFree),
// with synchronous upload / download helpers. Allocation failures throw CudaError naming the
// requested size; the destructor never throws.
//
//   DeviceBuffer<int32_t> d_col(csr.col_idx);          // allocate + upload
//   DeviceBuffer<float> d_z(num_dst * F);              // uninitialized
//   d_z.fill_zero(stream);
//   std::vector<float> z = d_z.download();
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.h"

namespace gsparse::bench {

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    /// n uninitialized elements.
    explicit DeviceBuffer(size_t n) { allocate(n); }
    /// A device copy of host.
    explicit DeviceBuffer(const std::vector<T> &host) {
        allocate(host.size());
        upload(host);
    }
    ~DeviceBuffer() { release(); }

    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
    DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
        if (this != &o) {
            release();
            ptr_ = std::exchange(o.ptr_, nullptr);
            size_ = std::exchange(o.size_, 0);
        }
        return *this;
    }

    /// Frees the current memory (if any) and allocates n uninitialized elements.
    void allocate(size_t n) {
        release();
        if (n == 0) return;
        void *p = nullptr;
        const cudaError_t st = cudaMalloc(&p, n * sizeof(T));
        if (st != cudaSuccess)
            throw CudaError("cudaMalloc of " + std::to_string(n * sizeof(T)) + " bytes (" + std::to_string(n) +
                            " elements) failed: " + cuda_status_string(st));
        ptr_ = static_cast<T *>(p);
        size_ = n;
    }

    void release() noexcept {
        if (ptr_) cudaFree(ptr_);
        ptr_ = nullptr;
        size_ = 0;
    }

    T *data() const { return ptr_; }
    size_t size() const { return size_; }
    size_t bytes() const { return size_ * sizeof(T); }
    bool empty() const { return size_ == 0; }

    /// Copies count elements from host to elements [offset, offset + count). Synchronous.
    void upload(const T *host, size_t count, size_t offset = 0) {
        check_range(offset, count, "upload");
        if (count) GSPARSE_CUDA_CHECK(cudaMemcpy(ptr_ + offset, host, count * sizeof(T), cudaMemcpyHostToDevice));
    }
    void upload(const std::vector<T> &host, size_t offset = 0) { upload(host.data(), host.size(), offset); }

    /// Copies elements [offset, offset + count) to host. Synchronous.
    void download(T *host, size_t count, size_t offset = 0) const {
        check_range(offset, count, "download");
        if (count) GSPARSE_CUDA_CHECK(cudaMemcpy(host, ptr_ + offset, count * sizeof(T), cudaMemcpyDeviceToHost));
    }
    std::vector<T> download() const {
        std::vector<T> host(size_);
        download(host.data(), size_);
        return host;
    }

    /// Sets every byte to zero, asynchronously on stream.
    void fill_zero(cudaStream_t stream = nullptr) {
        if (size_) GSPARSE_CUDA_CHECK(cudaMemsetAsync(ptr_, 0, bytes(), stream));
    }

private:
    void check_range(size_t offset, size_t count, const char *what) const {
        if (offset > size_ || count > size_ - offset)
            throw CudaError(std::string("DeviceBuffer ") + what + " of elements [" + std::to_string(offset) + ", " +
                            std::to_string(offset + count) + ") is outside the buffer of " + std::to_string(size_) +
                            " elements");
    }

    T *ptr_ = nullptr;
    size_t size_ = 0;
};

}  // namespace gsparse::bench
