// Where the tuning cache lives by default and the key of a tuning problem in it (apart from the file
// handling in tuning_cache.cpp, which needs neither Halide nor the runtime).
#include "api/tuning_key.h"
#include "autotune/tuning_cache.h"
#include "autotune/tuning_problem.h"

namespace gsparse::autotune {

std::string TuningCache::default_path() { return default_tuning_cache_path(); }

std::string TuningCache::key(const TuningProblem &p) { return tuning_key(p.device, p.op_name(), p.layout, p.graph); }

}  // namespace gsparse::autotune
