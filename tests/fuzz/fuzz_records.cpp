// Fuzz target: the measurement-records reader (read_records, JSON Lines). Every record it accepts
// writes (record_to_json) to JSON that reads back to the same record.
#include <nlohmann/json.hpp>

#include "autotune/records.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace gsparse::autotune;
    static gsparse::fuzz::MemFile in("gsparse-fuzz-records");
    in.write(data, size);
    std::vector<MeasurementRecord> records;
    try {
        records = read_records(in.path());
    } catch (const gsparse::Error &) {
        return 0;
    }
    for (const MeasurementRecord &r : records) {
        std::string text;
        try {
            text = record_to_json(r).dump();
        } catch (const nlohmann::json::type_error &) {
            continue;  // strings that are not UTF-8 are read but cannot be written back as JSON
        }
        const MeasurementRecord back = record_from_json(nlohmann::json::parse(text));
        FUZZ_CHECK(back.device == r.device && back.op == r.op && back.graph == r.graph &&
                       back.graph_fingerprint == r.graph_fingerprint && back.feat == r.feat &&
                       back.time_ms == r.time_ms && back.schedule == r.schedule && back.features == r.features,
                   "record round trip changed %s", text.c_str());
    }
    return 0;
}
