// Features of a (problem, schedule point) pair for the cost model: the cost metrics of the paper's
// Algorithm 4 computed from the schedule knobs and the input shape (memory-access efficiency,
// parallel degree, data reuse, thread-block-size penalty, shared-memory size, ...) followed by the
// shape itself (nodes, nnz, feature length, average / max row length, row-length COV).
#pragma once

#include <string>
#include <vector>

#include "autotune/tuning_problem.h"
#include "schedules/schedule_params.h"

namespace gsparse::autotune {

/// Names of the features, in the order candidate_features returns them.
const std::vector<std::string> &feature_names();

/// The feature vector of schedule point p on problem (all finite, >= 0).
std::vector<float> candidate_features(const TuningProblem &problem, const ScheduleParams &p);

/// The same from the parts (for records whose problem is no longer in memory).
std::vector<float> candidate_features(const Problem &problem, bool spmm, const ScheduleParams &p);

}  // namespace gsparse::autotune
