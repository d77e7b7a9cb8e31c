// Replayed measurements: the tuner's search run over the recorded times of an earlier tune (its
// gsparse-tune --json result) instead of compiling and timing candidates, to compare search
// strategies without measurement noise (gsparse-tune --replay, benchmarks/replay_tune.py).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "autotune/measure.h"
#include "autotune/records.h"
#include "autotune/tuning_problem.h"

namespace gsparse::autotune {

/// The measurements of a recorded tune of problem p as a lookup by schedule point. Recorded points
/// and queries are completed with the schedule space's absent-knob values first, so points that
/// list only some knobs (an expert default, records older than a knob) match. A point the tune did
/// not measure reads as failed ("not measured in the replayed tune"). Throws Error for a file that
/// is not a gsparse-tune result or records another problem (op, feature shape, graph size).
std::function<Measurement(const ScheduleParams &)> replayed_measurements(const std::string &path, const TuningProblem &p);

/// The feature length a measurement record of problem p carries (g-SDDMM dot: the reduced length).
int64_t record_feature_length(const TuningProblem &p);

/// The measurement record of m, a measurement of problem p: the point's cost-model features, the
/// device, operator, graph and feature length, and m's mean time.
MeasurementRecord measurement_record(const TuningProblem &p, const Measurement &m);

/// The earlier measurements of one problem, looked up by the completed point (as in
/// replayed_measurements): a point without a record returns nothing. The Measurements have
/// `recorded` set and the recorded time as mean, median and minimum. Copies share the table.
class RecordedMeasurements {
public:
    RecordedMeasurements(std::shared_ptr<const std::map<std::string, Measurement>> table, ScheduleSpace space)
        : table_(std::move(table)), space_(std::move(space)) {}
    std::optional<Measurement> operator()(const ScheduleParams &q) const;
    size_t size() const { return table_->size(); }  ///< distinct points with a record

private:
    std::shared_ptr<const std::map<std::string, Measurement>> table_;
    ScheduleSpace space_;
};

/// The earlier measurements of problem p among `records` (gsparse-tune --resume): records of the same
/// device, operator, graph fingerprint and feature length; the latest record of a point wins.
RecordedMeasurements recorded_measurements(const std::vector<MeasurementRecord> &records, const TuningProblem &p);

}  // namespace gsparse::autotune
