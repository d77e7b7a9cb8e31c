// What the example plugin's CUDA schedules share: the threads a block puts over the features.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gsparse_examples {

/// Threads over features: the knob, or (0) the largest power of two up to min(F, 32).
inline int64_t feature_threads(int64_t knob, int features) {
    if (knob > 0) return knob;
    int64_t t = 1;
    while (t * 2 <= std::min(features, 32)) t *= 2;
    return t;
}

}  // namespace gsparse_examples
