// groupByDst, a knob of the g-SDDMM schedules: the edges are processed in destination order.
//
// The COO arrays are given in the graph's CSR order (edges grouped by destination node) and position
// e of the algorithm computes the edge edge_of(e):
//   * edge-indexed operands are read at edge_of(e) (bind_rows over the operand loads);
//   * the output's stores are remapped from position e to edge_of(e) by the BindBufferStores pass
//     (after StoreIndexLets, since the warp-shuffle lowering let-binds store indices),
// so results come back in the caller's edge-id order. Threads of neighbouring positions then read
// the same destination row, which the cache serves once; with edge ids that do not follow the
// destinations (edges listed in any other order) this is the locality the edge-id order lacks.
#pragma once

#include <optional>
#include <string>

#include "ops/sddmm_algorithm.h"
#include "schedules/schedule_params.h"

namespace gsparse {

/// The knob; with searched = false the space offers only 0 (1 stays valid in explicit schedules).
ScheduleKnob group_by_dst_knob(bool searched);
bool groups_by_dst(const ScheduleParams &s);
std::optional<std::string> group_by_dst_invalid(const ScheduleParams &s);

/// Rewrites a (not yet scheduled) algorithm to compute edge edge_of(e) at position e: declares
/// a.edge_of, sets a.edges_grouped and appends the store-remapping passes to a.lowering_passes.
/// Must run before any rfactor copies the definitions.
void group_by_destination(SddmmAlgorithm &a);

}  // namespace gsparse
