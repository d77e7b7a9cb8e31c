// CPU schedules of g-SpMM and g-SDDMM: rows (edges) in parallel tasks, features vectorized.
#pragma once

#include "schedules/schedule.h"

namespace gsparse {

/// cpu_spmm: knobs vector_width (lanes along the innermost feature dim; 1 = scalar) and
/// rows_per_task (rows of one parallel task).
SpmmScheduleDef cpu_spmm_schedule();
/// cpu_sddmm: knobs vector_width (lanes along the innermost feature dim, or along dot's reduced dim
/// when the output has a single feature) and edges_per_task.
SddmmScheduleDef cpu_sddmm_schedule();

}  // namespace gsparse
