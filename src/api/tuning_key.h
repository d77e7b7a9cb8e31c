// Where and under which key gsparse-tune stores a tuned schedule, shared with the callers that look tuned
// schedules up (the Python package): device model, operator, feature layout, dtype and graph
// fingerprint. A schedule tuned for one of them is not used for another.
#pragma once

#include <string>

#include "core/tensor.h"
#include "graph/graph.h"
#include "ops/broadcast.h"

namespace gsparse {

/// gsparse-tune's tuning cache file: "$XDG_CACHE_HOME/gsparse/tuning.json", else
/// "$HOME/.cache/gsparse/tuning.json", else "gsparse-tuning.json".
std::string default_tuning_cache_path();

/// "cpu", or "cuda:<GPU name>" ("cuda" when the driver does not name the GPU).
std::string device_label(Device device);

/// "<device label>/<op name>/<layout key>/f32/<fingerprint, hex>"; op_name is "spmm copy_u_sum" or
/// "sddmm u_dot_v" (SpmmSpec / SddmmSpec name() after the kind). Tuning covers float32.
std::string tuning_key(Device device, const std::string &op_name, const FeatureLayout &layout, const Graph &graph);

}  // namespace gsparse
