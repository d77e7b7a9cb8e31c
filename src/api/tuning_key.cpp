#include "api/tuning_key.h"

#include <cstdlib>
#include <sstream>

#include "runtime/device_info.h"

namespace gsparse {

std::string default_tuning_cache_path() {
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/gsparse/tuning.json";
    if (const char *home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/gsparse/tuning.json";
    return "gsparse-tuning.json";
}

std::string device_label(Device device) {
    if (device != Device::CUDA) return device_name(device);
    static const std::string name = cuda_device_name();
    return name.empty() ? std::string(device_name(device)) : std::string(device_name(device)) + ":" + name;
}

std::string tuning_key(Device device, const std::string &op_name, const FeatureLayout &layout, const Graph &graph) {
    std::ostringstream os;
    os << device_label(device) << '/' << op_name << '/' << layout.key() << "/f32/" << std::hex << graph.fingerprint();
    return os.str();
}

}  // namespace gsparse
