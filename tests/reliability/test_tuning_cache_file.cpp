// The tuning-cache file under damage and under sharing: a corrupted file or entry is reported and
// ignored, never trusted, and kept aside as <path>.corrupt; processes storing into one file at the
// same time lose no entry and never leave a partial file.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../graph/graph_test_util.h"
#include "autotune/tuning_cache.h"

namespace gsparse::autotune {
namespace {

using test::ScratchDir;

CachedTune entry(int64_t rows_per_task, double ms) {
    CachedTune c;
    c.schedule = ScheduleParams{"cpu_spmm", {{"rows_per_task", rows_per_task}, {"vector_width", 8}}};
    c.time_ms = ms;
    c.date = "2026-11-25T00:00:00Z";
    return c;
}

nlohmann::json read_json(const std::string &path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

TEST(TuningCacheFile, MissingFileStartsEmptyAndStoreCreatesFolders) {
    ScratchDir dir;
    const std::string path = dir.path("a/b/tuning.json");
    TuningCache cache(path);
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_TRUE(cache.warnings().empty());
    cache.store("k", entry(16, 0.5));
    TuningCache again(path);
    ASSERT_TRUE(again.lookup("k").has_value());
    EXPECT_EQ(again.lookup("k")->schedule, entry(16, 0.5).schedule);
    EXPECT_DOUBLE_EQ(again.lookup("k")->time_ms, 0.5);
}

TEST(TuningCacheFile, CorruptedFileIsReportedIgnoredAndKeptAside) {
    ScratchDir dir;
    for (const std::string bad : {"garbage", "{\"entries\": [1, 2]}", "[]", "{\"entries\": {\"k\": 1", ""}) {
        const std::string path = dir.write("tuning.json", bad);
        TuningCache cache(path);
        EXPECT_EQ(cache.size(), 0u) << bad;
        ASSERT_EQ(cache.warnings().size(), 1u) << bad;
        EXPECT_NE(cache.warnings()[0].find("ignoring it"), std::string::npos) << cache.warnings()[0];
        EXPECT_FALSE(cache.lookup("k").has_value());
        cache.store("k", entry(4, 1.0));
        EXPECT_EQ(test::read_bytes(path + ".corrupt"), bad);
        EXPECT_EQ(read_json(path)["entries"].size(), 1u);
    }
}

TEST(TuningCacheFile, MalformedEntryIsAReportedMissAndIsReplacedByTheNextStore) {
    ScratchDir dir;
    const std::string path = dir.write(
        "tuning.json", R"({"entries": {"bad": {"schedule": 7}, "worse": [], "slow": {"schedule": {"schedule": "s"},
        "time_ms": "slow"}, "good": {"schedule": {"schedule": "s", "params": {"x": 1}}, "time_ms": 2}}})");
    TuningCache cache(path);
    EXPECT_EQ(cache.size(), 4u);
    EXPECT_TRUE(cache.warnings().empty());
    for (const char *k : {"bad", "worse", "slow"}) EXPECT_FALSE(cache.lookup(k).has_value()) << k;
    EXPECT_EQ(cache.warnings().size(), 3u);
    ASSERT_TRUE(cache.lookup("good").has_value());
    EXPECT_EQ(cache.lookup("good")->schedule.get("x"), 1);
    cache.store("bad", entry(8, 0.25));
    TuningCache again(path);
    ASSERT_TRUE(again.lookup("bad").has_value());
    EXPECT_EQ(again.lookup("bad")->schedule.get("rows_per_task"), 8);
}

TEST(TuningCacheFile, StoreKeepsWhatAnotherCacheOnTheFileStoredMeanwhile) {
    ScratchDir dir;
    const std::string path = dir.path("tuning.json");
    TuningCache a(path), b(path);  // both opened before either stored
    a.store("from-a", entry(1, 1.0));
    b.store("from-b", entry(2, 2.0));
    const auto entries = read_json(path)["entries"];
    EXPECT_TRUE(entries.contains("from-a"));
    EXPECT_TRUE(entries.contains("from-b"));
    EXPECT_TRUE(b.lookup("from-a").has_value());  // b sees a's entry after merging
}

TEST(TuningCacheFile, ProcessesStoringAtOnceLoseNothing) {
    ScratchDir dir;
    const std::string path = dir.path("tuning.json");
    constexpr int kProcs = 4, kStores = 25;
    std::vector<pid_t> children;
    for (int p = 0; p < kProcs; p++) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            int rc = 0;
            try {
                TuningCache cache(path);
                for (int i = 0; i < kStores; i++) {
                    cache.store("p" + std::to_string(p) + "/" + std::to_string(i), entry(i + 1, p + 1.0));
                    // Readers never see a partial file.
                    if (TuningCache(path).warnings().size() != 0) rc = 3;
                }
            } catch (...) {
                rc = 2;
            }
            ::_exit(rc);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0) << "2: a store threw, 3: a reader saw a malformed file";
    }
    TuningCache cache(path);
    EXPECT_TRUE(cache.warnings().empty());
    EXPECT_EQ(cache.size(), static_cast<size_t>(kProcs * kStores));
    for (int p = 0; p < kProcs; p++)
        for (int i = 0; i < kStores; i++) {
            auto hit = cache.lookup("p" + std::to_string(p) + "/" + std::to_string(i));
            ASSERT_TRUE(hit.has_value());
            EXPECT_EQ(hit->schedule.get("rows_per_task"), i + 1);
        }
    // No temporary files are left behind.
    std::set<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(dir.path(""))) names.insert(e.path().filename().string());
    EXPECT_EQ(names, (std::set<std::string>{"tuning.json", "tuning.json.lock"}));
}

}  // namespace
}  // namespace gsparse::autotune
