// The search space of a tuning problem: the points of the device's schedule space that pass the
// schedule's validity rule, each kernel once (a point whose canonical form is another point names
// the same kernel and is left out). Rejected points are counted; the first few are kept with their
// reasons for reporting (a space at F = 256 rejects some 850 thousand points: keeping them all took
// most of the enumeration's 2-3 s).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autotune/tuning_problem.h"
#include "schedules/schedule_params.h"

namespace gsparse::autotune {

struct SearchSpace {
    std::string schedule;
    ScheduleSpace space;
    std::vector<ScheduleParams> valid;
    /// Points the validity rule rejects.
    size_t rejected_count = 0;
    /// The first kMaxRejectedExamples of them, with the rule's reasons.
    std::vector<std::pair<ScheduleParams, std::string>> rejected;
    static constexpr size_t kMaxRejectedExamples = 64;
    /// Valid points left out because their canonical form is another valid point (the same kernel).
    size_t aliases = 0;
    /// In canonical form, like every valid point.
    ScheduleParams expert_default;
    /// The schedule's canonical form of a point (the identity for schedules without one).
    std::function<ScheduleParams(const ScheduleParams &)> canonical = [](const ScheduleParams &p) { return p; };
};

/// Throws ScheduleError when the device has no schedule for the operator.
SearchSpace build_search_space(const TuningProblem &problem);
/// The knob space of the device's schedule for the problem, without enumerating or checking points.
ScheduleSpace schedule_space(const TuningProblem &problem);

}  // namespace gsparse::autotune
