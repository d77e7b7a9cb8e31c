// The name of the GPU kernels run on, for measurement records and tuning-cache keys: tuned schedules
// and timings belong to one device model.
#pragma once

#include <string>

namespace gsparse {

/// The CUDA driver's name of device `ordinal` ("NVIDIA H100 80GB HBM3"), or "" when the driver or
/// the device is missing. The driver library is opened at run time: nothing links against it.
std::string cuda_device_name(int ordinal = 0);

}  // namespace gsparse
