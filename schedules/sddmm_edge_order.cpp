// The groupByDst and kSrcTile knobs of the g-SDDMM schedules: the order edges are processed in.
#include "schedules/sddmm_edge_order.h"

#include "halide_ext/bind_buffer.h"
#include "halide_ext/store_index_lets.h"

namespace gsparse {

using namespace Halide;

ScheduleKnob group_by_dst_knob(bool searched) {
    if (!searched)
        return {"groupByDst", {0}, "edges processed grouped by destination node, results stored at their ids "
                                   "(1 is valid in explicit schedules; not searched)", 0};
    return {"groupByDst", {0, 1}, "edges processed grouped by destination node, results stored at their ids", 0};
}

ScheduleKnob src_tile_knob(bool searched) {
    const char *what = "with groupByDst = 1: edges grouped by tiles of this many consecutive source ids, in "
                       "destination order within a tile (0: one tile)";
    if (!searched) return {"kSrcTile", {0}, what, 0};
    return {"kSrcTile", {0, 512, 4096, 32768, 131072, 524288}, what, 0};
}

bool groups_by_dst(const ScheduleParams &s) { return s.get_or("groupByDst", 0) != 0; }

int64_t src_tile(const ScheduleParams &s) { return s.get_or("kSrcTile", 0); }

std::optional<std::string> edge_order_invalid(const ScheduleParams &s) {
    const int64_t g = s.get_or("groupByDst", 0);
    if (g != 0 && g != 1) return "groupByDst must be 0 or 1, got " + std::to_string(g);
    const int64_t t = src_tile(s);
    constexpr int64_t kMaxTile = int64_t{1} << 30;
    if (t != 0 && (t < 64 || t > kMaxTile || (t & (t - 1)) != 0))
        return "kSrcTile must be 0 or a power of two in [64, 2^30], got " + std::to_string(t);
    if (t != 0 && g == 0) return "kSrcTile = " + std::to_string(t) + " needs groupByDst = 1";
    return std::nullopt;
}

void group_by_destination(SddmmAlgorithm &a, int64_t src_tile) {
    a.edges_grouped = true;
    a.src_tile = src_tile;
    // The remapping pass rewrites the row term of the store index: the output starts at 0, so the
    // index has no other term with the row stride.
    for (int d = 0; d <= a.layout.rank(); d++) a.out.output_buffer().dim(d).set_min(0);
    a.edge_of = ImageParam(Int(32), 1, "edge_of");
    a.edge_of.dim(0).set_min(0);
    // edge_of is a permutation of [0, num_edges) (validated edge ids), padded with edge 0.
    Expr id = unsafe_promise_clamped(a.edge_of(a.e), 0, a.num_edges - 1);
    // Everything indexed by e reads edge edge_of(e), except the COO arrays (given in position order)
    // and dot, which is computed by position.
    std::vector<Func> funcs = {a.out};
    if (a.layout.reduce_len > 0) funcs.push_back(a.dot);
    ext::bind_rows_except(funcs, a.e, id, {a.src_idx.name(), a.dst_idx.name(), a.dot.name()});
    // The output's definition reads edge_of too, so that the pipeline passes the buffer to the
    // kernel that stores the output (the remapping pass adds loads Halide would not know about).
    // Ids are never negative, so the added term is zero. It is arithmetic on purpose: a select on
    // the id would become a guard around the whole edge's computation, which waits for the id's
    // load before any feature load and hides the lanes' combine from the butterfly pass.
    Internal::Definition &def = a.out.function().definition();
    for (Expr &value : def.values()) value = value + cast(value.type(), min(a.edge_of(a.e), 0));
    const std::vector<std::string> out = {a.out.name()};
    // Shuffle lowering let-binds store indices; the remapping pass needs them in the Store.
    a.lowering_passes.push_back(std::make_shared<ext::StoreIndexLets>(out));
    a.lowering_passes.push_back(std::make_shared<ext::BindBufferStores>(out, a.layout.rank(), a.edge_of.parameter()));
}

}  // namespace gsparse
