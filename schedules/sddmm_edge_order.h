// groupByDst and kSrcTile, knobs of the g-SDDMM schedules: the order the edges are processed in.
//
// The COO arrays are given in the graph's CSR order (edges grouped by destination node) and position
// e of the algorithm computes the edge edge_of(e):
//   * edge-indexed operands are read at edge_of(e) (bind_rows over the operand loads);
//   * the output's stores are remapped from position e to edge_of(e) by the BindBufferStores pass
//     (after StoreIndexLets, since the warp-shuffle lowering let-binds store indices),
// so results come back in the caller's edge-id order. Threads of neighbouring positions then read
// the same destination row, which the cache serves once; with edge ids that do not follow the
// destinations (edges listed in any other order) this is the locality the edge-id order lacks.
//
// kSrcTile = T > 0 (with groupByDst = 1) regroups that order by tiles of T consecutive source ids:
// edges ordered by (src / T, dst, src) (Graph::coo_by_dst(T)). The blocks running at any moment then
// gather source rows of one tile only, T rows whose features stay in L2 (or L1) however large the
// whole source feature tensor is, while the destination rows are still read in runs (about
// avg_degree * T / num_src edges per destination and tile). The kernel is the one of groupByDst = 1;
// only the arrays the runtime passes differ.
#pragma once

#include <optional>
#include <string>

#include "ops/sddmm_algorithm.h"
#include "schedules/schedule_params.h"

namespace gsparse {

/// The knobs; with searched = false the space offers only 0 (other values stay valid in explicit
/// schedules).
ScheduleKnob group_by_dst_knob(bool searched);
ScheduleKnob src_tile_knob(bool searched);
bool groups_by_dst(const ScheduleParams &s);
/// kSrcTile, 0 when absent.
int64_t src_tile(const ScheduleParams &s);
/// Why groupByDst / kSrcTile are invalid, if they are.
std::optional<std::string> edge_order_invalid(const ScheduleParams &s);

/// Rewrites a (not yet scheduled) algorithm to compute edge edge_of(e) at position e: declares
/// a.edge_of, sets a.edges_grouped (and a.src_tile, the order the runtime passes the edges in) and
/// appends the store-remapping passes to a.lowering_passes. Must run before any rfactor copies the
/// definitions.
void group_by_destination(SddmmAlgorithm &a, int64_t src_tile = 0);

}  // namespace gsparse
