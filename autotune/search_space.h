// The search space of a tuning problem: the points of the device's schedule space that pass the
// schedule's validity rule. Rejected points are kept with their reasons for reporting.
#pragma once

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
    std::vector<std::pair<ScheduleParams, std::string>> rejected;
    ScheduleParams expert_default;
};

/// Throws ScheduleError when the device has no schedule for the operator.
SearchSpace build_search_space(const TuningProblem &problem);
/// The knob space of the device's schedule for the problem, without enumerating or checking points.
ScheduleSpace schedule_space(const TuningProblem &problem);

}  // namespace gsparse::autotune
