// Fuzz target: the schedule-point parser (ScheduleParams::parse, "name{k=v, ...}" / "name:k=v,...")
// and JSON form. A point it accepts prints (str()) to text that parses back to the same point, and
// survives a JSON round trip.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "schedules/schedule_params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using gsparse::ScheduleParams;
    const std::string text(reinterpret_cast<const char *>(data), size);
    ScheduleParams p;
    try {
        p = ScheduleParams::parse(text);
    } catch (const gsparse::ScheduleError &) {
        return 0;
    }
    const std::string printed = p.str();
    ScheduleParams again;
    try {
        again = ScheduleParams::parse(printed);
    } catch (const gsparse::ScheduleError &e) {
        FUZZ_CHECK(false, "str() of an accepted point does not parse: %s", e.what());
    }
    FUZZ_CHECK(again == p, "parse(str()) is another point: '%s'", printed.c_str());
    // JSON: what to_json writes, from_json reads back (keys and names are arbitrary bytes, so the
    // JSON text may hold invalid UTF-8, which dump() rejects with an exception of its own).
    try {
        const nlohmann::json j = nlohmann::json::parse(p.to_json().dump());
        FUZZ_CHECK(ScheduleParams::from_json(j) == p, "JSON round trip changed '%s'", printed.c_str());
    } catch (const nlohmann::json::type_error &) {
    }
    return 0;
}
