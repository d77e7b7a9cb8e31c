// The interface every schedule file implements, and the registry that maps (operator kind, device)
// to the schedules available for it.
//
// A schedule definition knows its parameter space for a given problem, an expert default point,
// a validity rule that explains why a point is rejected, and how to apply a point to the algorithm's
// Funcs. Schedules never change what an algorithm computes, only how.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/formats.h"
#include "ops/sddmm_algorithm.h"
#include "ops/spmm_algorithm.h"
#include "schedules/schedule_params.h"

namespace gsparse {

/// What a schedule may look at when choosing defaults or checking validity.
struct Problem {
    FeatureLayout layout;
    GraphStats stats;  ///< rows (destinations for SpMM), nnz, row-length spread
    /// The reduction returns arg ids (max/min): its result depends on the order in which a row's
    /// neighbours are combined, so schedules that reorder them are invalid.
    bool order_sensitive = false;
    /// The operator reads a per-edge operand (g-SpMM's rhs), stored in edge-id order: schedules that
    /// visit edges in another order read it scattered.
    bool edge_operand = false;
    /// The operator gathers source-node features (g-SpMM's lhs: every ⊕ but copy_rhs).
    bool source_operand = true;
    /// The features' element type: Halide 14's warp shuffles move 32 bits, so 64-bit features
    /// cannot combine lanes through them.
    DType dtype = DType::F32;
};

/// The problem of a g-SpMM operator on a graph with these statistics (empty for ahead-of-time
/// kernels): the layout plus the operator's order sensitivity (max/min) and edge operand (⊕ reads
/// rhs). Every caller that picks or checks a g-SpMM schedule builds its Problem here.
inline Problem spmm_problem(const SpmmSpec &spec, const FeatureLayout &layout, const GraphStats &stats = {},
                            DType dtype = DType::F32) {
    return {layout, stats, has_arg_outputs(spec.reduce), uses_rhs(spec.op), uses_lhs(spec.op), dtype};
}

/// The problem of a g-SDDMM operator on a graph with these statistics (empty for ahead-of-time kernels).
inline Problem sddmm_problem(const FeatureLayout &layout, const GraphStats &stats = {}, DType dtype = DType::F32) {
    Problem p{layout, stats};
    p.dtype = dtype;
    return p;
}

template <typename Algorithm>
struct ScheduleDef {
    std::string name;
    Device device = Device::CPU;
    ScheduleSpace (*space)(const Problem &) = nullptr;
    ScheduleParams (*default_params)(const Problem &) = nullptr;
    /// nullopt when valid, else the reason.
    std::optional<std::string> (*invalid_reason)(const ScheduleParams &, const Problem &) = nullptr;
    void (*apply)(Algorithm &, const ScheduleParams &) = nullptr;
    /// The point with every knob it does not use set to that knob's first choice (nullptr: every
    /// knob is always used). Points with one canonical form compile to the same kernel, so a search
    /// space lists only canonical points.
    ScheduleParams (*canonical)(const ScheduleParams &) = nullptr;
};

/// def.canonical(p), or p where the schedule has no canonical form.
template <typename Algorithm>
ScheduleParams canonical_point(const ScheduleDef<Algorithm> &def, const ScheduleParams &p) {
    return def.canonical ? def.canonical(p) : p;
}

using SpmmScheduleDef = ScheduleDef<SpmmAlgorithm>;
using SddmmScheduleDef = ScheduleDef<SddmmAlgorithm>;

/// All registered schedules.
const std::vector<SpmmScheduleDef> &spmm_schedules();
const std::vector<SddmmScheduleDef> &sddmm_schedules();
/// Lookup by name; throws ScheduleError listing the known names.
const SpmmScheduleDef &spmm_schedule(const std::string &name);
const SddmmScheduleDef &sddmm_schedule(const std::string &name);
/// The default schedule definition for a device; throws ScheduleError when there is none.
const SpmmScheduleDef &default_spmm_schedule(Device device);
const SddmmScheduleDef &default_sddmm_schedule(Device device);

/// Throws ScheduleError with the schedule's reason when params is invalid for the problem.
template <typename Algorithm>
void check_schedule(const ScheduleDef<Algorithm> &def, const ScheduleParams &params, const Problem &problem);

}  // namespace gsparse
