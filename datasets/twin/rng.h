// Counter-based random numbers for the twin generator. Every random decision is drawn from a
// stream derived from (seed, purpose, index) with the splitmix64 finalizer, so the result of a
// generation does not depend on the order in which rows are processed or on the thread count.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace gsparse::datasets::detail {

/// The splitmix64 finalizer: a bijective 64-bit mixer with good avalanche.
inline uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// Stream purposes: different purposes with the same index give unrelated streams.
enum class Stream : uint64_t {
    row_lengths = 1,   ///< which node gets which row length
    communities = 2,   ///< community sizes and their order
    relabel = 3,       ///< the id permutation of the shuffled order
    row = 4,           ///< the sources of one row (index = row in community order)
};

/// A splitmix64 sequence started at a key derived from (seed, stream, index).
class Rng {
public:
    Rng(uint64_t seed, Stream stream, uint64_t index)
        : state_(mix64(mix64(seed ^ (static_cast<uint64_t>(stream) << 56)) ^ mix64(index + 0x632BE59BD9B4E019ull))) {}

    uint64_t next() {
        state_ += 0x9E3779B97F4A7C15ull;
        uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    /// Uniform double in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Uniform integer in [0, n) for 0 < n <= 2^32 (multiply-shift; the bias is below 2^-32 * n).
    uint64_t below(uint64_t n) { return ((next() >> 32) * n) >> 32; }

private:
    uint64_t state_;
};

/// A uniformly random permutation of 0..n-1 (Fisher-Yates driven by rng).
template <typename T>
std::vector<T> random_permutation(int64_t n, Rng &rng) {
    std::vector<T> p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) p[static_cast<size_t>(i)] = static_cast<T>(i);
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
        std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
    }
    return p;
}

}  // namespace gsparse::datasets::detail
