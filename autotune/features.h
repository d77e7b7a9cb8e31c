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

/// Positions in feature_names() of the features that `patterns` name, in feature_names() order: a
/// pattern is a feature name or a prefix followed by '*' ("sddmm_*"); no patterns select every
/// feature. Throws Error for a pattern that names no feature.
std::vector<size_t> select_features(const std::vector<std::string> &patterns);

/// Whether candidate_features knows the schedule (cpu_spmm, cpu_sddmm, gpu_spmm).
bool has_features(const std::string &schedule);

/// Recomputes the feature vector a measurement record stored (written by this build or an older one)
/// from the problem shape it holds (the shape_* and op_spmm entries, which keep their positions) and
/// the record's schedule point p, so that records stay training data when features are added or
/// redefined. Throws Error for a vector too short to hold the shape, ScheduleError as
/// candidate_features does.
std::vector<float> refresh_features(const std::vector<float> &stored, const ScheduleParams &p);

/// The feature vector of schedule point p on problem (all finite, >= 0), feature_names().size()
/// entries. Throws ScheduleError for a schedule without features (see has_features) and for a
/// point that lacks one of the schedule's knobs.
std::vector<float> candidate_features(const TuningProblem &problem, const ScheduleParams &p);

/// The same from the parts (for records whose problem is no longer in memory).
std::vector<float> candidate_features(const Problem &problem, bool spmm, const ScheduleParams &p);

}  // namespace gsparse::autotune
