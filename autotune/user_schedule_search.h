// The genetic search (genetic.h) over the knobs of a user schedule (dsl::ScheduleDef and
// dsl::EdgeScheduleDef, the schedules users write for their own programs): the schedule's valid points for a feature count and device
// as a SearchSpace, every candidate measured on the graph (dsl::measure_points: no cost model ranks
// user programs). gsparse-tune --plugin --mode genetic runs it; for spaces too large to measure
// whole.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autotune/genetic.h"
#include "autotune/search_space.h"
#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"

namespace gsparse::autotune {

/// The knobs of def as a schedule space (named def.name) and its valid points for features on
/// device (def.space), the default point first among them as expert_default; ScheduleError when
/// there is none.
SearchSpace user_search_space(const dsl::KnobSpace &def, int features, Device device);

/// A point of a user schedule as ScheduleParams of its space, and back.
ScheduleParams user_point_params(const dsl::KnobSpace &def, const std::map<std::string, int64_t> &point);
std::map<std::string, int64_t> user_params_point(const ScheduleParams &params);

/// Runs the genetic search from the schedule's default point, measuring each distinct candidate
/// once (runs timed runs after a warm-up, median; a candidate that fails to compile or run counts
/// as unfit). Returns the measured points fastest first.
std::vector<dsl::MeasuredPoint> genetic_user_search(const dsl::SpmmProgram &program, const dsl::ScheduleDef &def,
                                                    int features, Device device, const Graph &g,
                                                    const std::map<std::string, Tensor> &operands, Tensor &out,
                                                    const CudaLaunch &launch, int runs,
                                                    const std::function<void()> &sync, const GeneticOptions &options);
/// The same for a per-edge program and an edge schedule.
std::vector<dsl::MeasuredPoint> genetic_user_search(const dsl::SddmmProgram &program, const dsl::EdgeScheduleDef &def,
                                                    int features, Device device, const Graph &g,
                                                    const std::map<std::string, Tensor> &operands, Tensor &out,
                                                    const CudaLaunch &launch, int runs,
                                                    const std::function<void()> &sync, const GeneticOptions &options);

}  // namespace gsparse::autotune
