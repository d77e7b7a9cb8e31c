#include "runtime/device_info.h"

#include <dlfcn.h>

namespace gsparse {

std::string cuda_device_name(int ordinal) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return "";
    using InitFn = int (*)(unsigned);
    using DeviceGetFn = int (*)(int *, int);
    using DeviceGetNameFn = int (*)(char *, int, int);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
    auto device_get = reinterpret_cast<DeviceGetFn>(dlsym(lib, "cuDeviceGet"));
    auto device_get_name = reinterpret_cast<DeviceGetNameFn>(dlsym(lib, "cuDeviceGetName"));
    std::string name;
    int device = 0;
    char buf[256] = {};
    if (init && device_get && device_get_name && init(0) == 0 && device_get(&device, ordinal) == 0 &&
        device_get_name(buf, sizeof buf - 1, device) == 0)
        name = buf;
    dlclose(lib);
    return name;
}

}  // namespace gsparse
