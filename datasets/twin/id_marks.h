// A set of node ids as a bitset, for generators that draw a row's distinct sources (twins and zoo
// families): insert, look up and erase in O(1), and drain the marked ids in ascending order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/formats.h"

namespace gsparse::datasets::detail {

/// A set of ids in [0, n) as a bitset: the sources already in the row being generated.
class IdMarks {
public:
    IdMarks() = default;
    explicit IdMarks(int64_t n) : words_(static_cast<size_t>((n + 63) / 64), 0) {}
    int64_t num_words() const { return static_cast<int64_t>(words_.size()); }
    /// Marks u; returns false when it was already marked.
    bool insert(int64_t u) {
        uint64_t &w = words_[static_cast<size_t>(u >> 6)];
        const uint64_t bit = uint64_t{1} << (u & 63);
        if (w & bit) return false;
        w |= bit;
        return true;
    }
    bool contains(int64_t u) const { return (words_[static_cast<size_t>(u >> 6)] >> (u & 63)) & 1; }
    void erase(int64_t u) { words_[static_cast<size_t>(u >> 6)] &= ~(uint64_t{1} << (u & 63)); }
    /// Writes the marked ids in ascending order to out and clears all marks.
    void drain(index_t *out) {
        for (size_t k = 0; k < words_.size(); k++) {
            for (uint64_t w = words_[k]; w; w &= w - 1)
                *out++ = static_cast<index_t>((static_cast<int64_t>(k) << 6) + __builtin_ctzll(w));
            words_[k] = 0;
        }
    }

private:
    std::vector<uint64_t> words_;
};

}  // namespace gsparse::datasets::detail
