#include "twin/alias_table.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gsparse::datasets::detail {

AliasTables::AliasTables(const std::vector<double> &weights, const std::vector<int64_t> &bounds,
                         const std::vector<int32_t> &ids)
    : bounds_(bounds), columns_(weights.size()) {
    const int64_t total_n = static_cast<int64_t>(weights.size());
    if (bounds_.size() < 2 || bounds_.front() != 0 || bounds_.back() != total_n)
        fail<Error>("alias tables: slice bounds must start at 0 and end at the weight count ", total_n);
    if (!ids.empty() && static_cast<int64_t>(ids.size()) != total_n)
        fail<Error>("alias tables: ", ids.size(), " ids for ", total_n, " weights");
    auto id_of = [&](int64_t i) { return ids.empty() ? static_cast<int32_t>(i) : ids[i]; };
    std::vector<double> scaled;
    std::vector<int64_t> small, large;
    for (size_t t = 0; t + 1 < bounds_.size(); t++) {
        const int64_t b = bounds_[t], e = bounds_[t + 1];
        if (e < b) fail<Error>("alias tables: slice bounds must be ascending (", b, " > ", e, ")");
        const int64_t n = e - b;
        double total = 0;
        for (int64_t i = b; i < e; i++) {
            if (!(weights[i] >= 0) || !std::isfinite(weights[i]))
                fail<Error>("alias tables: weight ", i, " is ", weights[i], "; weights must be finite and >= 0");
            total += weights[i];
        }
        scaled.assign(static_cast<size_t>(n), 1.0);
        if (total > 0)
            for (int64_t i = 0; i < n; i++) scaled[i] = weights[b + i] * static_cast<double>(n) / total;
        small.clear();
        large.clear();
        for (int64_t i = 0; i < n; i++) {
            columns_[b + i].id = id_of(b + i);
            (scaled[i] < 1.0 ? small : large).push_back(i);
        }
        // Vose: pair each under-full column with an over-full one that tops it up.
        while (!small.empty() && !large.empty()) {
            const int64_t s = small.back(), l = large.back();
            small.pop_back();
            columns_[b + s].threshold = static_cast<uint32_t>(std::min(scaled[s] * 4294967296.0, 4294967295.0));
            columns_[b + s].alias_id = id_of(b + l);
            scaled[l] -= 1.0 - scaled[s];
            if (scaled[l] < 1.0) {
                large.pop_back();
                small.push_back(l);
            }
        }
        // What is left is full up to rounding: the column always returns its own id.
        for (const auto *rest : {&small, &large})
            for (int64_t i : *rest) {
                columns_[b + i].threshold = 0xFFFFFFFFu;
                columns_[b + i].alias_id = columns_[b + i].id;
            }
    }
}

double AliasTables::probability(int64_t table, int64_t i) const {
    const int64_t b = bounds_[table], e = bounds_[table + 1];
    const int32_t target = columns_[i].id;
    double p = 0;
    for (int64_t c = b; c < e; c++) {
        const Column &col = columns_[c];
        const double keep = col.alias_id == col.id ? 1.0 : static_cast<double>(col.threshold) / 4294967296.0;
        if (col.id == target) p += keep;
        if (col.alias_id == target && col.alias_id != col.id) p += 1.0 - keep;
    }
    return p / static_cast<double>(e - b);
}

}  // namespace gsparse::datasets::detail
