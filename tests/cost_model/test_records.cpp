// Measurement records (JSON Lines): round trip, appending, and errors that name the line.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include <cstdlib>

#include "autotune/records.h"
#include "core/error.h"

namespace gsparse::autotune {
namespace {

std::string temp_path(const std::string &name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("gsparse_records_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    auto p = dir / name;
    std::filesystem::remove(p);
    return p.string();
}

MeasurementRecord sample(int i) {
    MeasurementRecord r;
    r.features = {0.0f, 1.5f, 1e7f + i, 0.1f, 3.25f * i};
    r.schedule = ScheduleParams::parse("gpu_spmm{kMTile=4, kNTile=32, kNRegTile=2}");
    r.schedule.values["kNnzTile"] = 16 << i;
    r.device = "NVIDIA H100 80GB HBM3";
    r.op = "spmm copy_u_sum";
    r.graph = "reddit twin (scale 0.01, shuffled ids)";
    r.graph_fingerprint = std::numeric_limits<uint64_t>::max() - i;
    r.feat = 32 + i;
    r.time_ms = 0.1234567890123 * (i + 1);
    return r;
}

void expect_same(const MeasurementRecord &a, const MeasurementRecord &b) {
    EXPECT_EQ(a.features, b.features);
    EXPECT_EQ(a.schedule, b.schedule);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.graph, b.graph);
    EXPECT_EQ(a.graph_fingerprint, b.graph_fingerprint);
    EXPECT_EQ(a.feat, b.feat);
    EXPECT_EQ(a.time_ms, b.time_ms);
}

TEST(Records, RoundTripAndAppend) {
    const std::string path = temp_path("r.jsonl");
    append_records(path, {sample(0), sample(1)});
    append_records(path, {sample(2)});
    auto back = read_records(path);
    ASSERT_EQ(back.size(), 3u);
    for (int i = 0; i < 3; i++) expect_same(back[i], sample(i));
    append_records(path, {});
    EXPECT_EQ(read_records(path).size(), 3u);
}

TEST(Records, GzipCompressedFilesReadLikePlainOnes) {
    const std::string path = temp_path("r.jsonl");
    append_records(path, {sample(0), sample(1), sample(2)});
    ASSERT_EQ(std::system(("gzip -kf '" + path + "'").c_str()), 0);
#ifdef GSPARSE_HAVE_ZLIB
    auto back = read_records(path + ".gz");
    ASSERT_EQ(back.size(), 3u);
    for (int i = 0; i < 3; i++) expect_same(back[i], sample(i));
    // Not gzip data: zlib reads it as plain text, so a malformed line is named as in a plain file.
    { std::ofstream(path + ".bad.gz") << "not json\n"; }
    try {
        read_records(path + ".bad.gz");
        FAIL() << "a malformed line was accepted";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(".bad.gz:1: malformed JSON"), std::string::npos) << e.what();
    }
#else
    try {
        read_records(path + ".gz");
        FAIL() << "a gzip file was read without zlib";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("no zlib"), std::string::npos) << e.what();
    }
#endif
    EXPECT_THROW(read_records(path + ".missing.gz"), Error);
}

TEST(Records, BlankLinesAreSkippedAndAnEmptyFileHasNoRecords) {
    const std::string path = temp_path("r.jsonl");
    { std::ofstream(path) << ""; }
    EXPECT_TRUE(read_records(path).empty());
    { std::ofstream(path) << "\n" << record_to_json(sample(0)).dump() << "\n   \n"; }
    EXPECT_EQ(read_records(path).size(), 1u);
}

TEST(Records, FingerprintAsIntegerIsAccepted) {
    nlohmann::json j = record_to_json(sample(0));
    EXPECT_TRUE(j["graph_fingerprint"].is_string());
    j["graph_fingerprint"] = uint64_t{12345};
    EXPECT_EQ(record_from_json(j).graph_fingerprint, 12345u);
}

std::string error_of(const std::string &path) {
    try {
        read_records(path);
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

TEST(Records, MalformedLinesNameTheLine) {
    const std::string path = temp_path("bad.jsonl");
    const std::string good = record_to_json(sample(0)).dump();
    auto write = [&](const std::string &bad_line) {
        std::ofstream out(path);
        out << good << "\n\n" << bad_line << "\n" << good << "\n";
    };
    struct Case {
        std::function<void(nlohmann::json &)> edit;
        std::string expect;
    };
    std::vector<Case> cases = {
        {[](nlohmann::json &j) { j.erase("time_ms"); }, "time_ms"},
        {[](nlohmann::json &j) { j.erase("features"); }, "features"},
        {[](nlohmann::json &j) { j.erase("schedule"); }, "schedule"},
        {[](nlohmann::json &j) { j["feat"] = "32"; }, "feat"},
        {[](nlohmann::json &j) { j["time_ms"] = -1.0; }, "time_ms"},
        {[](nlohmann::json &j) { j["device"] = 3; }, "device"},
        {[](nlohmann::json &j) { j["features"][1] = "x"; }, "features[1]"},
        {[](nlohmann::json &j) { j["graph_fingerprint"] = "not hex"; }, "graph_fingerprint"},
        {[](nlohmann::json &j) { j["schedule"]["params"]["kMTile"] = 1.5; }, "kMTile"},
        {[](nlohmann::json &j) { j = nlohmann::json::array({1, 2}); }, "object"},
    };
    for (const auto &c : cases) {
        nlohmann::json j = record_to_json(sample(0));
        c.edit(j);
        write(j.dump());
        const std::string msg = error_of(path);
        EXPECT_NE(msg.find(":3:"), std::string::npos) << msg;
        EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    }
    write("{\"device\": \"cpu\", ");  // truncated JSON
    const std::string msg = error_of(path);
    EXPECT_NE(msg.find(":3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("JSON"), std::string::npos) << msg;
}

TEST(Records, MissingOrUnwritableFileThrows) {
    EXPECT_THROW(read_records("/nonexistent/dir/r.jsonl"), Error);
    EXPECT_THROW(append_records("/nonexistent/dir/r.jsonl", {sample(0)}), Error);
}

}  // namespace
}  // namespace gsparse::autotune
