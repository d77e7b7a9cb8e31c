// The knobs of a user schedule and the space they span, shared by the schedules of both program
// shapes (dsl::ScheduleDef for g-SpMM-shaped programs, dsl::EdgeScheduleDef for per-edge ones):
// each knob's choices and default, a validity rule over a whole point, the completion and checking
// of a point, the enumeration of every valid point, a point as text, and the timing loop of a
// schedule search.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace gsparse::dsl {

/// A point of a schedule: a value for each of its knobs.
using SchedulePoint = std::map<std::string, int64_t>;

/// A schedule's declared knobs and validity rule (what the tuner searches), without the directives.
struct KnobSpace {
    struct Knob {
        std::string name;
        std::vector<int64_t> choices;
        int64_t default_value = 0;
    };
    std::string name;
    std::vector<Knob> knobs;
    /// Why the point (every knob set) is invalid for these features on this device, or "" if valid.
    std::function<std::string(const SchedulePoint &point, int features, Device device)> why_invalid;

    /// point completed with the defaults of the knobs it leaves out; ScheduleError for an unknown
    /// knob, a value outside a knob's choices, or a point the validity rule rejects.
    SchedulePoint complete(const SchedulePoint &point, int features, Device device) const;
    /// Every valid point (the product of the knobs' choices, filtered by the validity rule).
    std::vector<SchedulePoint> space(int features, Device device) const;
};

/// A point as text: name{knob=value, ...}.
std::string point_str(const KnobSpace &def, const SchedulePoint &point);

/// The knob values a schedule's directives read (ScheduleContext, EdgeScheduleContext).
struct KnobValues {
    SchedulePoint knobs;  ///< every knob of the schedule, chosen or default
    /// The value of knob `name`; ScheduleError when the schedule has no such knob.
    int64_t knob(const std::string &name) const;
};

/// One measured point of a schedule search.
struct MeasuredPoint {
    SchedulePoint point;
    double median_ms = 0;
};

/// ShapeError unless a search's arguments can time anything: runs >= 1, and on CUDA a sync (a
/// function that waits for the launch's stream).
void check_search(int runs, Device device, const std::function<void()> &sync);

/// The median time of `runs` (>= 1) timed calls of run after one warm-up call; `sync` (if given)
/// waits for the device after each call and is part of its time. ShapeError for runs < 1.
double median_run_ms(const std::function<void()> &run, int runs, const std::function<void()> &sync);

}  // namespace gsparse::dsl
