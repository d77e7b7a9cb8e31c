// Schedule parameter points and spaces.
//
// A schedule is a named function that applies loop transformations to an operator's algorithm; its
// knobs (tile sizes, vector widths, switches) form a ScheduleParams point. A ScheduleSpace lists the
// candidate values of every knob; the tuner enumerates, samples and mutates points of it, and each
// schedule's validity rule rejects points that cannot work, with the reason.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gsparse {

struct ScheduleParams {
    std::string schedule;                   ///< name of the schedule, e.g. "cpu_spmm"
    std::map<std::string, int64_t> values;  ///< knob -> value

    /// The value of a knob; throws ScheduleError naming the schedule and the knob when it is missing.
    int64_t get(const std::string &knob) const;
    /// The value of a knob, or `fallback` when the point lacks it (points stored before the knob).
    int64_t get_or(const std::string &knob, int64_t fallback) const;
    /// "cpu_spmm{rows_per_task=16, vector_width=8}" — stable, used in cache keys.
    std::string str() const;
    nlohmann::json to_json() const;
    /// Throws ScheduleError for malformed JSON.
    static ScheduleParams from_json(const nlohmann::json &j);
    /// Parses "name{k=v, ...}" or "name:k=v,k=v" as printed by str(); throws ScheduleError.
    static ScheduleParams parse(const std::string &text);

    bool operator==(const ScheduleParams &o) const { return schedule == o.schedule && values == o.values; }
    bool operator<(const ScheduleParams &o) const {
        return schedule != o.schedule ? schedule < o.schedule : values < o.values;
    }
};

struct ScheduleKnob {
    std::string name;
    std::vector<int64_t> choices;
    std::string help;
    /// For a knob added after points were stored (tuning caches, records, schedule files): the value
    /// a point without it means. Knobs without one must be given.
    std::optional<int64_t> absent_means = std::nullopt;
};

struct ScheduleSpace {
    std::string schedule;
    std::vector<ScheduleKnob> knobs;

    /// Number of points (product of the choice counts).
    size_t size() const;
    /// The i-th point in mixed-radix order (first knob fastest).
    ScheduleParams at(size_t i) const;
    /// The same, written into `point`: a point of this space already has every knob, so walking a
    /// space through one point allocates nothing.
    void at(size_t i, ScheduleParams &point) const;
    const ScheduleKnob &knob(const std::string &name) const;
    /// p (a point of this schedule) with every knob it lacks that has an absent_means value set to
    /// that value: points stored before a knob existed then name the same kernel as new ones.
    ScheduleParams complete(ScheduleParams p) const;
};

}  // namespace gsparse
