#include "ops/graph_build_algorithm.h"

#include <functional>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/halide_types.h"

namespace gsparse {

using namespace Halide;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

Tuple identity_stats() {
    return Tuple(std::vector<Expr>{Expr(kInt64Max), Expr(kInt64Min), Expr(kInt64Max), Expr(kInt64Min), cast<int64_t>(0)});
}

/// out(k, t) = part(t)[k] for the statistics k.
void select_stat(Func &out, const Func &part, const Var &k, const Var &t) {
    std::vector<Expr> values;
    for (int s = 0; s < kCooStatCount; s++) values.push_back(part(t)[s]);
    out(k, t) = mux(k, values);
}

/// search(x) = the first i in [lo, hi) where first_true(i) holds, hi where it holds nowhere
/// (first_true false, then true over the range): a binary search of `steps` halvings over r, the
/// bounds in search(x)[0] and [1]. (An update runs once per RVar it names: the step names r,
/// though the search needs no step number.)
void define_binary_search(Func &search, const Var &x, RDom &r, const Expr &steps, const Expr &lo, const Expr &hi,
                          const std::function<Expr(const Expr &)> &first_true) {
    r = RDom(0, steps, "r");
    search(x) = Tuple(lo, hi);
    Expr l = search(x)[0], h = search(x)[1];
    Expr mid = l + (h - l) / 2;
    Expr go_left = first_true(mid);
    Expr open = l < h && r.x < steps;
    search(x) = Tuple(select(open && !go_left, mid + 1, l), select(open && go_left, mid, h));
}

}  // namespace

void check_index_dtype(DType dtype, const char *what) {
    if (dtype != DType::I32 && dtype != DType::I64)
        fail<ShapeError>(what, " must hold int32 or int64 ids, not ", dtype_name(dtype));
}

CooStatsAlgorithm build_coo_stats_algorithm(DType index) {
    check_index_dtype(index, "the edges' index arrays");
    CooStatsAlgorithm a;
    a.index = index;
    a.src = ImageParam(halide_type(index), 1, "src");
    a.dst = ImageParam(halide_type(index), 1, "dst");
    Expr E = a.num_edges, P = a.parts;
    a.r = RDom(0, (E + P - 1) / P, "r");
    Expr i = min(a.t + a.r * P, E - 1);
    Expr s = cast<int64_t>(a.src(i)), d = cast<int64_t>(a.dst(i));
    Expr next = cast<int64_t>(a.dst(min(i + 1, E - 1)));
    Func &p = a.part;
    p(a.t) = identity_stats();
    p(a.t) = Tuple(std::vector<Expr>{min(p(a.t)[kMinSrc], s), max(p(a.t)[kMaxSrc], s), min(p(a.t)[kMinDst], d),
                    max(p(a.t)[kMaxDst], d), p(a.t)[kDescents] + select(next < d, cast<int64_t>(1), cast<int64_t>(0))});
    select_stat(a.out, p, a.k, a.t);
    return a;
}

StatsCombineAlgorithm build_stats_combine_algorithm() {
    StatsCombineAlgorithm a;
    a.in = ImageParam(Int(64), 2, "in");
    Expr C = a.count, P = a.parts;
    a.r = RDom(0, (C + P - 1) / P, "r");
    Expr j = a.t + a.r * P;
    Expr jc = min(j, C - 1);  // repeated partials change no minimum or maximum; the count adds them once
    Func &p = a.part;
    p(a.t) = identity_stats();
    p(a.t) = Tuple(std::vector<Expr>{min(p(a.t)[kMinSrc], a.in(kMinSrc, jc)), max(p(a.t)[kMaxSrc], a.in(kMaxSrc, jc)),
                    min(p(a.t)[kMinDst], a.in(kMinDst, jc)), max(p(a.t)[kMaxDst], a.in(kMaxDst, jc)),
                    p(a.t)[kDescents] + select(j < C, a.in(kDescents, jc), cast<int64_t>(0))});
    select_stat(a.out, p, a.k, a.t);
    return a;
}

RowOffsetsAlgorithm build_row_offsets_algorithm(DType index) {
    check_index_dtype(index, "the destination array");
    RowOffsetsAlgorithm a;
    a.index = index;
    a.dst = ImageParam(halide_type(index), 1, "dst");
    Expr E = a.num_edges;
    define_binary_search(a.search, a.row, a.r, a.steps, cast<int32_t>(0), E, [&](const Expr &mid) {
        return cast<int64_t>(a.dst(clamp(mid, 0, max(E - 1, 0)))) >= cast<int64_t>(a.row);
    });
    a.out(a.row) = a.search(a.row)[0];
    return a;
}

namespace {

/// int32(in(i)) for i < n, 0 past it (in read at a clamped index: it holds at least one entry).
Expr narrowed(const ImageParam &in, const Var &i, const Expr &n) {
    return select(i < n, cast<int32_t>(in(clamp(i, 0, max(n - 1, 0)))), 0);
}

}  // namespace

NarrowIndexAlgorithm build_narrow_index_algorithm(DType index) {
    check_index_dtype(index, "the index array");
    NarrowIndexAlgorithm a;
    a.index = index;
    a.in = ImageParam(halide_type(index), 1, "in");
    a.out(a.i) = narrowed(a.in, a.i, a.count);
    return a;
}

NarrowPairAlgorithm build_narrow_pair_algorithm(DType index) {
    check_index_dtype(index, "the index arrays");
    NarrowPairAlgorithm a;
    a.index = index;
    a.a = ImageParam(halide_type(index), 1, "a");
    a.b = ImageParam(halide_type(index), 1, "b");
    a.out(a.i) = Tuple(narrowed(a.a, a.i, a.count), narrowed(a.b, a.i, a.count));
    return a;
}

LoopRowPtrAlgorithm build_loop_row_ptr_algorithm() {
    LoopRowPtrAlgorithm a;
    a.out(a.r) = a.row_ptr(min(a.r, a.num_dst)) + min(a.r, a.loops);
    return a;
}

LoopCooAlgorithm build_loop_coo_algorithm() {
    LoopCooAlgorithm a;
    Expr E = a.num_edges, n = a.loops, N = a.num_dst;
    auto new_offset = [&](const Expr &row) { return a.row_ptr(row) + min(row, n); };
    // The first row x in [1, N] whose new offset exceeds q (offset(0) = 0 <= q < offset(N) =
    // E + n for every edge q): q is in row x - 1.
    define_binary_search(a.search, a.q, a.r, a.steps, cast<int32_t>(1), N,
                         [&](const Expr &mid) { return new_offset(clamp(mid, 0, N)) > a.q; });
    Expr row = a.search(a.q)[0] - 1;
    Expr is_loop = row < n && a.q == new_offset(clamp(row + 1, 0, N)) - 1;
    Expr col = a.col_idx(clamp(a.q - min(row, n), 0, max(E - 1, 0)));
    Expr edge = a.q < E + n;
    a.out(a.q) = Tuple(select(edge, select(is_loop, row, col), 0), select(edge, row, 0),
                       cast<uint8_t>(edge && !is_loop && col == row));
    return a;
}

LoopCooAppendAlgorithm build_loop_coo_append_algorithm() {
    LoopCooAppendAlgorithm a;
    Expr E = a.num_edges, n = a.loops;
    Expr i = clamp(a.q, 0, max(E - 1, 0));
    Expr s = a.src(i), d = a.dst(i);
    Expr old = a.q < E, loop = a.q >= E && a.q < E + n;
    a.out(a.q) = Tuple(select(old, s, loop, a.q - E, 0), select(old, d, loop, a.q - E, 0), cast<uint8_t>(old && s == d));
    return a;
}

LoopDegreesAlgorithm build_loop_degrees_algorithm() {
    LoopDegreesAlgorithm a;
    a.r = RDom(0, a.num_edges, "r");
    Expr s = a.src(a.r), d = a.dst(a.r);
    Expr own = a.own(a.r) != 0;
    a.r.where(own || s != d);  // the appended loops count in neither
    a.out(a.j, a.v) = 0;
    a.out(select(own, 1, 0), clamp(d, 0, max(a.num_dst - 1, 0))) += 1;
    return a;
}

GcnWeightsAlgorithm build_gcn_weights_algorithm() {
    GcnWeightsAlgorithm a;
    Expr E = a.num_edges, N = a.num_dst;
    Expr i = clamp(a.e, 0, max(E - 1, 0));
    Expr s = clamp(a.src(i), 0, max(N - 1, 0)), d = clamp(a.dst(i), 0, max(N - 1, 0));
    Expr own = a.own(i) != 0;
    auto loop_weight = [&](const Expr &v) { return select(a.degrees(1, v) > 0, 1.0f, a.fill); };
    auto inv_sqrt_degree = [&](const Expr &v) {
        Expr deg = cast<float>(a.degrees(0, v)) + select(v < a.loops, loop_weight(v), 0.0f);
        return select(deg > 0.0f, 1.0f / sqrt(deg), 0.0f);
    };
    Expr base = select(own, 0.0f, s == d, loop_weight(d), 1.0f);
    Expr w = select(a.normalize != 0, base * inv_sqrt_degree(s) * inv_sqrt_degree(d), base);
    a.out(a.e) = select(a.e < E, w, 0.0f);
    return a;
}

}  // namespace gsparse
