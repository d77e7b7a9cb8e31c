// GPU test support: skips (reported as skipped by ctest) when no CUDA device is present, gives the
// tests the primary CUDA context and a stream, and moves tensors between host and device.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "api/gsparse.h"

namespace gsparse::test {

class GpuTest : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    /// A device copy of a host tensor (freed with the fixture).
    Tensor to_device(const Tensor &host);
    /// An uninitialized device tensor.
    Tensor device_empty(const std::vector<int64_t> &shape, DType dtype);
    /// A host copy of a device tensor.
    Tensor to_host(const Tensor &dev);

    OpOptions options(const ScheduleParams *schedule = nullptr) const;
    void sync() const;

    CudaLaunch launch_;
    cudaStream_t stream_ = nullptr;

private:
    std::vector<std::shared_ptr<void>> allocations_;
};

}  // namespace gsparse::test
