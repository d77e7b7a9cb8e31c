// Measurement records: what the tuner measured, one JSON object per line (JSON Lines), for training
// the cost model. A record holds the features, the schedule point, the device, the operator, the
// graph fingerprint and name, the feature length and the measured time.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "schedules/schedule_params.h"

namespace gsparse::autotune {

struct MeasurementRecord {
    std::vector<float> features;
    ScheduleParams schedule;
    std::string device;  ///< e.g. "NVIDIA H100 80GB HBM3" or "cpu"
    std::string op;      ///< e.g. "spmm copy_u_sum"
    std::string graph;   ///< graph name
    uint64_t graph_fingerprint = 0;
    int64_t feat = 0;
    double time_ms = 0;  ///< mean of the timed runs
};

/// One record as a JSON object (the fingerprint as a 16-digit hex string).
nlohmann::json record_to_json(const MeasurementRecord &record);
/// Parses and validates one record; throws gsparse::Error naming the missing or malformed field.
MeasurementRecord record_from_json(const nlohmann::json &j);

/// Appends records to a JSON Lines file (created if missing). Throws gsparse::Error on I/O errors.
void append_records(const std::string &path, const std::vector<MeasurementRecord> &records);
/// Appends records one at a time, each written and flushed as it comes, so that an interrupted tune
/// keeps what it measured (gsparse-tune --records). The file is opened (created if missing) by the
/// constructor, before anything is measured; both throw gsparse::Error naming the file on I/O errors.
class RecordAppender {
public:
    explicit RecordAppender(const std::string &path);
    void append(const MeasurementRecord &record);

private:
    std::string path_;
    std::ofstream out_;
};

/// The whole text of a file, plain or gzip-compressed (a name ending in ".gz"; needs a build with
/// zlib); throws gsparse::Error naming the file when it cannot be read.
std::string read_possibly_compressed(const std::string &path);

/// Reads a JSON Lines file, plain or gzip-compressed (a name ending in ".gz"; needs a build with
/// zlib); throws gsparse::Error naming the line for malformed records.
std::vector<MeasurementRecord> read_records(const std::string &path);

}  // namespace gsparse::autotune
