// Measurement records as JSON Lines: one object per line,
//   {"device": "...", "op": "...", "graph": "...", "graph_fingerprint": "00ab...(16 hex digits)",
//    "feat": 32, "time_ms": 0.123, "schedule": {"schedule": "gpu_spmm", "params": {...}},
//    "features": [...]}
// The fingerprint is written as a hex string (JSON readers that hold numbers in doubles would round
// a 64-bit integer); an unsigned integer is accepted when reading.
#include "autotune/records.h"

#include <iterator>
#include <vector>

#ifdef GSPARSE_HAVE_ZLIB
#include <zlib.h>
#endif

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace gsparse::autotune {

namespace {

std::string hex64(uint64_t x) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
    return buf;
}

const nlohmann::json &field(const nlohmann::json &j, const char *name) {
    auto it = j.find(name);
    if (it == j.end()) fail<Error>("missing field '", name, "'");
    return *it;
}

std::string string_field(const nlohmann::json &j, const char *name) {
    const auto &v = field(j, name);
    if (!v.is_string()) fail<Error>("field '", name, "' must be a string, got ", v.dump());
    return v.get<std::string>();
}

uint64_t parse_fingerprint(const nlohmann::json &v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (!s.empty() && s.size() <= 16 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos)
            return std::stoull(s, nullptr, 16);
    }
    fail<Error>("field 'graph_fingerprint' must be a hex string of at most 16 digits or an unsigned integer, got ",
                v.dump());
}

}  // namespace

nlohmann::json record_to_json(const MeasurementRecord &r) {
    nlohmann::json j;
    j["device"] = r.device;
    j["op"] = r.op;
    j["graph"] = r.graph;
    j["graph_fingerprint"] = hex64(r.graph_fingerprint);
    j["feat"] = r.feat;
    j["time_ms"] = r.time_ms;
    j["schedule"] = r.schedule.to_json();
    j["features"] = r.features;
    return j;
}

MeasurementRecord record_from_json(const nlohmann::json &j) {
    if (!j.is_object()) fail<Error>("a record must be a JSON object, got ", j.type_name());
    MeasurementRecord r;
    r.device = string_field(j, "device");
    r.op = string_field(j, "op");
    r.graph = string_field(j, "graph");
    r.graph_fingerprint = parse_fingerprint(field(j, "graph_fingerprint"));
    const auto &feat = field(j, "feat");
    if (!feat.is_number_integer() || feat.get<int64_t>() < 1)
        fail<Error>("field 'feat' must be a positive integer, got ", feat.dump());
    r.feat = feat.get<int64_t>();
    const auto &time = field(j, "time_ms");
    if (!time.is_number() || !std::isfinite(time.get<double>()) || time.get<double>() <= 0)
        fail<Error>("field 'time_ms' must be a positive number, got ", time.dump());
    r.time_ms = time.get<double>();
    try {
        r.schedule = ScheduleParams::from_json(field(j, "schedule"));
    } catch (const ScheduleError &e) {
        fail<Error>("field 'schedule': ", e.what());
    }
    const auto &features = field(j, "features");
    if (!features.is_array()) fail<Error>("field 'features' must be an array of numbers, got ", features.type_name());
    r.features.reserve(features.size());
    for (size_t i = 0; i < features.size(); i++) {
        const auto &x = features[i];
        if (!x.is_number()) fail<Error>("features[", i, "] must be a number, got ", x.dump());
        const double v = x.get<double>();
        if (!std::isfinite(v)) fail<Error>("features[", i, "] is not finite");
        // Features are kept as floats: a double beyond the float range would become infinite.
        if (!std::isfinite(static_cast<float>(v))) fail<Error>("features[", i, "] = ", v, " is out of the float range");
        r.features.push_back(static_cast<float>(v));
    }
    return r;
}

void append_records(const std::string &path, const std::vector<MeasurementRecord> &records) {
    RecordAppender out(path);
    for (const auto &r : records) out.append(r);
}

RecordAppender::RecordAppender(const std::string &path) : path_(path), out_(path, std::ios::app) {
    if (!out_) fail<Error>("cannot open records file '", path, "' for appending");
}

void RecordAppender::append(const MeasurementRecord &record) {
    out_ << record_to_json(record).dump() << '\n';
    out_.flush();
    if (!out_) fail<Error>("cannot write records file '", path_, "'");
}

/// The text of a file: plain, or gzip-compressed when its name ends in ".gz".
std::string read_possibly_compressed(const std::string &path) {
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (!gz) {
        std::ifstream in(path, std::ios::binary);
        if (!in) fail<Error>("cannot open file '", path, "'");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (in.bad()) fail<Error>("cannot read file '", path, "'");
        return text;
    }
#ifdef GSPARSE_HAVE_ZLIB
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) fail<Error>("cannot open file '", path, "'");
    std::string text;
    std::vector<char> buf(1 << 16);
    int n = 0;
    while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) text.append(buf.data(), static_cast<size_t>(n));
    int err = Z_OK;
    const std::string why = n < 0 ? gzerror(f, &err) : "";
    gzclose(f);
    if (n < 0) fail<Error>("cannot decompress file '", path, "': ", why);
    return text;
#else
    fail<Error>("file '", path, "' is gzip-compressed, and this build has no zlib (install zlib1g-dev and "
                "rebuild, or gunzip it first)");
#endif
}

std::vector<MeasurementRecord> read_records(const std::string &path) {
    const std::string text = read_possibly_compressed(path);
    std::vector<MeasurementRecord> records;
    size_t line_no = 0;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        line_no++;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            records.push_back(record_from_json(nlohmann::json::parse(line)));
        } catch (const nlohmann::json::exception &e) {
            fail<Error>(path, ":", line_no, ": malformed JSON: ", e.what());
        } catch (const Error &e) {
            fail<Error>(path, ":", line_no, ": ", e.what());
        }
    }
    return records;
}

}  // namespace gsparse::autotune
