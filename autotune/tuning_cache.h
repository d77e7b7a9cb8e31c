// The tuning cache: the best schedule found for (device, operator, feature layout, graph) so that a
// repeated tune is instant. Stored as one JSON file; every entry records the schedule, its time and
// the date it was measured.
//
// The file is never trusted: a file that is not a tuning cache (not JSON, no 'entries' object) is
// reported (warnings()) and ignored, and is moved aside to <path>.corrupt by the first store(); an
// entry that does not parse is reported and treated as a miss. Several processes may share one
// file: store() merges under an exclusive lock (<path>.lock), so entries other processes stored
// meanwhile are kept, and replaces the file by a rename, so readers see whole files only.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedules/schedule_params.h"

namespace gsparse::autotune {

struct TuningProblem;

struct CachedTune {
    ScheduleParams schedule;
    double time_ms = 0;
    std::string date;  ///< UTC, ISO 8601
};

class TuningCache {
public:
    /// Opens (or starts) the cache file at path. Throws gsparse::Error only when an existing file
    /// cannot be read at all; a malformed one is reported in warnings() and ignored.
    explicit TuningCache(std::string path);

    /// default_tuning_cache_path() (api/tuning_key.h).
    static std::string default_path();
    /// The key of a problem: device, operator, feature layout, dtype and graph fingerprint.
    static std::string key(const TuningProblem &problem);

    /// The entry for key; nullopt when there is none or it is malformed (then warnings() says so).
    std::optional<CachedTune> lookup(const std::string &key) const;
    /// Records the entry and writes the file, merged with what other processes stored since it was
    /// read (see above). Throws gsparse::Error when the file cannot be written.
    void store(const std::string &key, const CachedTune &entry);
    size_t size() const;
    /// The keys of the entries, sorted.
    std::vector<std::string> keys() const;
    const std::string &path() const { return path_; }
    /// What was found wrong with the file or its entries, one message each, oldest first.
    std::vector<std::string> warnings() const;

private:
    std::string path_;
    mutable std::mutex mu_;
    nlohmann::json entries_ = nlohmann::json::object();
    bool corrupt_ = false;  ///< the file on disk is not a tuning cache (moved aside by store())
    mutable std::vector<std::string> warnings_;
};

}  // namespace gsparse::autotune
