#include "autotune/tuning_cache.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/tuning_key.h"
#include "core/error.h"

namespace gsparse::autotune {

namespace fs = std::filesystem;

TuningCache::TuningCache(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    if (!fs::exists(path_, ec)) return;
    std::ifstream in(path_);
    if (!in) fail<Error>("cannot read the tuning cache ", path_);
    try {
        nlohmann::json j = nlohmann::json::parse(in);
        if (!j.is_object() || !j.contains("entries") || !j["entries"].is_object())
            fail<Error>("tuning cache ", path_, " has no 'entries' object");
        entries_ = j["entries"];
    } catch (const nlohmann::json::exception &e) {
        fail<Error>("tuning cache ", path_, " is not valid JSON: ", e.what());
    }
}

std::string TuningCache::default_path() { return default_tuning_cache_path(); }

std::string TuningCache::key(const TuningProblem &p) { return tuning_key(p.device, p.op_name(), p.layout, p.graph); }

std::optional<CachedTune> TuningCache::lookup(const std::string &key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    try {
        CachedTune c;
        c.schedule = ScheduleParams::from_json((*it)["schedule"]);
        c.time_ms = (*it).value("time_ms", 0.0);
        c.date = (*it).value("date", std::string());
        return c;
    } catch (const std::exception &e) {
        fail<Error>("tuning cache ", path_, ": malformed entry for ", key, ": ", e.what());
    }
}

void TuningCache::store(const std::string &key, const CachedTune &entry) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[key] = {{"schedule", entry.schedule.to_json()}, {"time_ms", entry.time_ms}, {"date", entry.date}};
    std::error_code ec;
    const fs::path target(path_);
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    const std::string tmp = path_ + ".tmp";
    {
        std::ofstream out(tmp);
        if (!out) fail<Error>("cannot write the tuning cache ", tmp);
        out << nlohmann::json{{"entries", entries_}}.dump(2) << "\n";
        if (!out) fail<Error>("writing the tuning cache ", tmp, " failed");
    }
    fs::rename(tmp, target, ec);
    if (ec) fail<Error>("cannot replace the tuning cache ", path_, ": ", ec.message());
}

size_t TuningCache::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
}

}  // namespace gsparse::autotune
