// The tuning cache file: reading it without trusting it, and merged, locked, atomic writes (see
// tuning_cache.h). The cache key of a problem is in tuning_cache_key.cpp.
#include "autotune/tuning_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace gsparse::autotune {

namespace fs = std::filesystem;

namespace {

enum class FileState { Missing, Valid, Corrupt };

/// Reads the entries of the cache file at path into entries. A missing file is Missing; a file that
/// is not a tuning cache is Corrupt, with why set. Throws Error when the file exists but cannot be
/// read.
FileState read_entries(const std::string &path, nlohmann::json &entries, std::string &why) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) return FileState::Missing;
    if (!fs::is_regular_file(st)) fail<Error>("the tuning cache ", path, " is not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail<Error>("cannot read the tuning cache ", path, ": ", std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) fail<Error>("cannot read the tuning cache ", path);
    try {
        nlohmann::json j = nlohmann::json::parse(text.str());
        if (!j.is_object() || !j.contains("entries") || !j["entries"].is_object()) {
            why = "tuning cache " + path + " has no 'entries' object";
            return FileState::Corrupt;
        }
        entries = std::move(j["entries"]);
        return FileState::Valid;
    } catch (const nlohmann::json::exception &e) {
        why = "tuning cache " + path + " is not valid JSON: " + e.what();
        return FileState::Corrupt;
    }
}

/// An exclusive advisory lock on <path>.lock, held for the object's life (none when the lock file
/// cannot be created: writing then fails on its own with a clear error).
class FileLock {
public:
    explicit FileLock(const std::string &path) {
        fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) return;
        while (::flock(fd_, LOCK_EX) != 0)
            if (errno != EINTR) break;
    }
    ~FileLock() {
        if (fd_ >= 0) ::close(fd_);  // closing releases the lock
    }
    FileLock(const FileLock &) = delete;
    FileLock &operator=(const FileLock &) = delete;

private:
    int fd_ = -1;
};

/// A temporary name next to path, unique to this process and call.
std::string temp_name(const std::string &path) {
    static std::atomic<uint64_t> counter{0};
    return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

TuningCache::TuningCache(std::string path) : path_(std::move(path)) {
    std::string why;
    if (read_entries(path_, entries_, why) == FileState::Corrupt) {
        corrupt_ = true;
        entries_ = nlohmann::json::object();
        warnings_.push_back(why + "; ignoring it (it is moved to " + path_ + ".corrupt when a tune is stored)");
    }
}

std::optional<CachedTune> TuningCache::lookup(const std::string &key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    try {
        const nlohmann::json &e = *it;
        if (!e.is_object()) fail<Error>("an entry must be a JSON object, got ", e.type_name());
        CachedTune c;
        c.schedule = ScheduleParams::from_json(e.at("schedule"));
        c.time_ms = e.value("time_ms", 0.0);
        c.date = e.value("date", std::string());
        return c;
    } catch (const std::exception &e) {
        warnings_.push_back("tuning cache " + path_ + ": malformed entry for " + key + " (" + e.what() +
                            "); ignoring it");
        return std::nullopt;
    }
}

void TuningCache::store(const std::string &key, const CachedTune &entry) {
    std::lock_guard<std::mutex> lock(mu_);
    const fs::path target(path_);
    std::error_code ec;
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    FileLock file_lock(path_);

    // Entries other processes stored since this cache was read are kept (theirs are newer).
    nlohmann::json on_disk = nlohmann::json::object();
    std::string why;
    const FileState state = read_entries(path_, on_disk, why);
    if (state == FileState::Corrupt) {
        fs::rename(target, path_ + ".corrupt", ec);
        if (!corrupt_) warnings_.push_back(why + "; moved to " + path_ + ".corrupt");
        corrupt_ = false;
    } else if (state == FileState::Valid) {
        for (auto it = on_disk.begin(); it != on_disk.end(); ++it) entries_[it.key()] = it.value();
    }
    entries_[key] = {{"schedule", entry.schedule.to_json()}, {"time_ms", entry.time_ms}, {"date", entry.date}};

    const std::string tmp = temp_name(path_);
    {
        std::ofstream out(tmp);
        if (!out) fail<Error>("cannot write the tuning cache ", tmp);
        out << nlohmann::json{{"entries", entries_}}.dump(2) << "\n";
        out.flush();
        if (!out) {
            out.close();
            fs::remove(tmp, ec);
            fail<Error>("writing the tuning cache ", tmp, " failed");
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        fail<Error>("cannot replace the tuning cache ", path_, ": ", ec.message());
    }
}

size_t TuningCache::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
}

std::vector<std::string> TuningCache::keys() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (auto it = entries_.begin(); it != entries_.end(); ++it) out.push_back(it.key());
    return out;
}

std::vector<std::string> TuningCache::warnings() const {
    std::lock_guard<std::mutex> lock(mu_);
    return warnings_;
}

}  // namespace gsparse::autotune
