// Walker/Vose alias tables: O(1) sampling of an index with probability proportional to a weight.
// Several tables share one array: a table covers a contiguous slice [begin, end) of the weight
// array. A sample returns the id of the drawn index (ids[index], or the index itself when no ids
// are given); each column holds both of its ids, so a draw reads one 12-byte entry.
#pragma once

#include <cstdint>
#include <vector>

namespace gsparse::datasets::detail {

class AliasTables {
public:
    /// Builds one table per slice [bounds[k], bounds[k+1]) of weights (bounds ascending, starting
    /// at 0 and ending at weights.size()). Weights must be finite and >= 0; a slice whose weights
    /// are all zero samples uniformly. ids, when not empty, maps each index to the id returned.
    AliasTables(const std::vector<double> &weights, const std::vector<int64_t> &bounds,
                const std::vector<int32_t> &ids = {});

    int64_t num_tables() const { return static_cast<int64_t>(bounds_.size()) - 1; }

    /// The id of an index of table's slice drawn with one 64-bit random number: the high 32 bits
    /// pick a column, the low 32 bits decide between the column and its alias.
    int32_t sample(int64_t table, uint64_t r) const {
        const uint64_t b = static_cast<uint64_t>(bounds_[table]);
        const uint64_t n = static_cast<uint64_t>(bounds_[table + 1]) - b;
        const Column &col = columns_[b + (((r >> 32) * n) >> 32)];
        return static_cast<uint32_t>(r) < col.threshold ? col.id : col.alias_id;
    }

    /// The probability with which table returns the id of index i (for tests).
    double probability(int64_t table, int64_t i) const;

private:
    struct Column {
        uint32_t threshold;  ///< return id when the low 32 bits are below this, else alias_id
        int32_t id;          ///< id of the column's own index
        int32_t alias_id;    ///< id of the alias index (== id where the column is kept surely)
    };
    std::vector<int64_t> bounds_;
    std::vector<Column> columns_;
};

}  // namespace gsparse::datasets::detail
