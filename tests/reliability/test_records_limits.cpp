// Records that cannot be trusted are rejected with the line and field named: among them values a
// record could not hold (a feature beyond the float range, found by fuzz_records).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../graph/graph_test_util.h"
#include "autotune/records.h"

namespace gsparse::autotune {
namespace {

using test::ScratchDir;
using test::throws_with;

std::string record_line(const std::string &features, const std::string &time = "0.5") {
    return R"({"device":"cpu","op":"spmm copy_u_sum","graph":"g","graph_fingerprint":"00ff","feat":8,"time_ms":)" +
           time + R"(,"schedule":{"schedule":"cpu_spmm","params":{"rows_per_task":16}},"features":)" + features + "}";
}

TEST(RecordsLimits, FeatureBeyondTheFloatRangeIsRejected) {
    ScratchDir dir;
    const std::string path = dir.write("r.jsonl", record_line("[1, 2]") + "\n" + record_line("[1, 1e300]") + "\n");
    EXPECT_TRUE(throws_with<Error>([&] { read_records(path); }, {":2:", "features[1]", "float range"}));
}

TEST(RecordsLimits, AcceptedRecordsWriteBackUnchanged) {
    ScratchDir dir;
    const std::string path = dir.write("r.jsonl", record_line("[1, 3.4e38, -1e-45, 0]") + "\n\n" + record_line("[]"));
    const auto records = read_records(path);
    ASSERT_EQ(records.size(), 2u);
    for (const auto &r : records) {
        const MeasurementRecord back = record_from_json(nlohmann::json::parse(record_to_json(r).dump()));
        EXPECT_EQ(back.features, r.features);
        EXPECT_EQ(back.schedule, r.schedule);
        EXPECT_EQ(back.graph_fingerprint, 0xffu);
    }
}

TEST(RecordsLimits, NonPositiveOrInfiniteTimesAndBadFingerprintsAreRejected) {
    ScratchDir dir;
    EXPECT_TRUE(throws_with<Error>([&] { read_records(dir.write("a.jsonl", record_line("[]", "0"))); }, {"time_ms"}));
    EXPECT_TRUE(throws_with<Error>([&] { read_records(dir.write("b.jsonl", record_line("[]", "1e400"))); },
                                   {":1:"}));
    std::string bad_fp = record_line("[]");
    bad_fp.replace(bad_fp.find("00ff"), 4, "12345678901234567");
    EXPECT_TRUE(throws_with<Error>([&] { read_records(dir.write("c.jsonl", bad_fp)); }, {"graph_fingerprint"}));
}

}  // namespace
}  // namespace gsparse::autotune
