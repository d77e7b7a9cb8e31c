// The tuning cache: the best schedule found for (device, operator, feature layout, graph) so that a
// repeated tune is instant. Stored as one JSON file; every entry records the schedule, its time and
// the date it was measured.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "autotune/tuning_problem.h"
#include "schedules/schedule_params.h"

namespace gsparse::autotune {

struct CachedTune {
    ScheduleParams schedule;
    double time_ms = 0;
    std::string date;  ///< UTC, ISO 8601
};

class TuningCache {
public:
    /// Opens (or starts) the cache file at path; a malformed file throws gsparse::Error.
    explicit TuningCache(std::string path);

    /// default_tuning_cache_path() (api/tuning_key.h).
    static std::string default_path();
    /// The key of a problem: device, operator, feature layout, dtype and graph fingerprint.
    static std::string key(const TuningProblem &problem);

    std::optional<CachedTune> lookup(const std::string &key) const;
    /// Records and writes the file (atomically, through a temporary file).
    void store(const std::string &key, const CachedTune &entry);
    size_t size() const;
    const std::string &path() const { return path_; }

private:
    std::string path_;
    mutable std::mutex mu_;
    nlohmann::json entries_ = nlohmann::json::object();
};

}  // namespace gsparse::autotune
