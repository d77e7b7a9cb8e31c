// The learned default of gpu_spmm and the segment gate (spmm_selector.h): walks the generated trees
// of spmm_selector_table.inc and spmm_segments_gate_table.inc.
#include "schedules/spmm_selector.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <array>

#include "schedules/spmm_segments.h"

namespace gsparse {
namespace {

struct SelectorNode {
    int feature;  ///< index into the statistics; -1 for a leaf
    double threshold;
    int left, right;  ///< children for value <= threshold / > threshold
    int first, count;  ///< a leaf's ranked points in kSelectorPoints
};

struct SelectorTree {
    int64_t feat;  ///< the feature length the tree was grown for
    int root;
    double lo[kSelectorFeatureCount], hi[kSelectorFeatureCount];  ///< the support box
};

#include "schedules/spmm_selector_table.inc"
#include "schedules/spmm_segments_gate_table.inc"

static_assert(sizeof(kSelectorFeatures) / sizeof(kSelectorFeatures[0]) == kSelectorFeatureCount,
              "spmm_selector_table.inc was generated for other statistics: rerun train_selector.py");
static_assert(sizeof(kSegmentGateFeatures) / sizeof(kSegmentGateFeatures[0]) == kSelectorFeatureCount,
              "spmm_segments_gate_table.inc was generated for other statistics: rerun train_segment_gate.py");

constexpr size_t kTreeCount = sizeof(kSelectorTrees) / sizeof(kSelectorTrees[0]);

/// A table's points parsed; nullopt for its sentinel (a leaf naming another rule than a point).
template <size_t N>
std::vector<std::optional<ScheduleParams>> parse_points(const char *const (&texts)[N], const char *sentinel) {
    std::vector<std::optional<ScheduleParams>> out;
    out.reserve(N);
    for (const char *text : texts)
        out.push_back(std::strcmp(text, sentinel) == 0 ? std::nullopt
                                                       : std::optional<ScheduleParams>(ScheduleParams::parse(text)));
    return out;
}

/// The selector's points, parsed once; nullopt for "expert". Knobs added after the tables were
/// grown take the value that points without them mean (rowTails = 0: the form they were measured in).
const std::vector<std::optional<ScheduleParams>> &parsed_points() {
    static const auto points = [] {
        auto parsed = parse_points(kSelectorPoints, "expert");
        for (auto &p : parsed)
            if (p) p->values.emplace("rowTails", 0);
        return parsed;
    }();
    return points;
}

/// The gate's segment points, parsed once; nullopt for "default" (the row schedule).
const std::vector<std::optional<ScheduleParams>> &gate_points() {
    static const auto points = parse_points(kSegmentGatePoints, "default");
    return points;
}

bool env_enabled(const char *name) {
    const char *v = std::getenv(name);
    return !(v && std::strcmp(v, "0") == 0);
}

bool selector_enabled() {
    static const bool enabled = env_enabled("GSPARSE_SPMM_SELECTOR");
    return enabled;
}

bool segment_gate_enabled() {
    static const bool enabled = env_enabled("GSPARSE_SPMM_SEGMENTS");
    return enabled;
}

bool segment_lanes_enabled() {
    static const bool enabled = env_enabled("GSPARSE_SPMM_SEGMENT_LANES");
    return enabled;
}

}  // namespace

bool row_tails_defaults_enabled() {
    static const bool enabled = env_enabled("GSPARSE_SPMM_ROW_TAILS");
    return enabled;
}

bool register_limits_enabled() {
    static const bool enabled = env_enabled("GSPARSE_SPMM_REGISTER_LIMITS");
    return enabled;
}

namespace {

const SelectorNode &leaf_of(const SelectorNode *nodes, const SelectorTree &tree,
                            const std::array<double, kSelectorFeatureCount> &x) {
    const SelectorNode *node = &nodes[tree.root];
    while (node->feature >= 0)
        node = &nodes[x[static_cast<size_t>(node->feature)] <= node->threshold ? node->left : node->right];
    return *node;
}

double log2_features(const Problem &p) {
    return std::log2(static_cast<double>(std::max<int64_t>(p.layout.extents[0], 1)));
}

bool inside(const SelectorTree &tree, const std::array<double, kSelectorFeatureCount> &x) {
    for (size_t i = 0; i < kSelectorFeatureCount; ++i)
        if (!(x[i] >= tree.lo[i] && x[i] <= tree.hi[i])) return false;
    return true;
}

}  // namespace

std::array<double, kSelectorFeatureCount> selector_features(const GraphStats &s) {
    const double avg = std::max(s.avg_row_length, 1e-3);
    const double rows = static_cast<double>(std::max<int64_t>(s.num_rows, 1));
    return {std::log2(avg),
            s.row_length_cov,
            std::log2(static_cast<double>(std::max<int64_t>(s.max_row_length, 1)) / avg),
            std::log2(static_cast<double>(std::max<int64_t>(s.nnz, 1))),
            std::log2(rows),
            std::log2(static_cast<double>(std::max<int64_t>(s.num_cols, 1)) / rows),
            s.col_length_cov,
            static_cast<double>(s.empty_rows) / rows};
}

std::optional<ScheduleParams> select_spmm_default(
    const Problem &p, const std::function<std::optional<std::string>(const ScheduleParams &, const Problem &)> &invalid_reason) {
    if (!selector_enabled() || p.stats.nnz <= 0 || p.stats.num_rows <= 0) return std::nullopt;
    const auto x = selector_features(p.stats);
    const double f = log2_features(p);
    // Trees by distance of their feature length from the problem's (log scale), the smaller first on
    // ties (the table lists them by feature length). Called on every operator call: no allocation.
    std::array<const SelectorTree *, kTreeCount> trees;
    for (size_t i = 0; i < kTreeCount; ++i) trees[i] = &kSelectorTrees[i];
    auto distance = [f](const SelectorTree *t) { return std::abs(std::log2(static_cast<double>(t->feat)) - f); };
    std::stable_sort(trees.begin(), trees.end(),
                     [&](const SelectorTree *a, const SelectorTree *b) { return distance(a) < distance(b); });
    const auto &points = parsed_points();
    for (const SelectorTree *tree : trees) {
        if (!inside(*tree, x)) return std::nullopt;
        const SelectorNode &leaf = leaf_of(kSelectorNodes, *tree, x);
        for (int i = leaf.first; i < leaf.first + leaf.count; ++i) {
            const auto &point = points[static_cast<size_t>(i)];
            if (!point) return std::nullopt;  // the expert rules rank first among what is valid here
            if (!invalid_reason(*point, p)) return *point;
        }
    }
    return std::nullopt;
}

std::optional<ScheduleParams> select_spmm_segments(const Problem &p) {
    if (!selector_enabled() || !segment_gate_enabled() || p.order_sensitive || p.stats.nnz <= 0 ||
        p.stats.num_rows <= 0)
        return std::nullopt;
    if (segment_lanes_enabled() && p.layout.out_len() == 1 && p.dtype == DType::F32 &&
        p.stats.nnz >= kSegmentWarpLanesMinEdges && p.stats.row_length_cov >= kSegmentWarpLanesCov && p.stats.avg_row_length < kSegmentWarpLanesMaxAverage)
        return segment_params(SegmentPoint{kSegmentWarpLanesRun, 1, 32});
    const auto x = selector_features(p.stats);
    const double f = log2_features(p);
    // The tree of the nearest swept feature length (log scale; the smaller on ties).
    const SelectorTree *nearest = nullptr;
    for (const SelectorTree &t : kSegmentGateTrees) {
        const double d = std::abs(std::log2(static_cast<double>(t.feat)) - f);
        if (!nearest || d < std::abs(std::log2(static_cast<double>(nearest->feat)) - f)) nearest = &t;
    }
    if (!nearest || !inside(*nearest, x)) return std::nullopt;
    const SelectorNode &leaf = leaf_of(kSegmentGateNodes, *nearest, x);
    // The first ranked point that fits the problem: the row schedule (nullopt), a segment point of
    // one feature element a thread, or one of a feature tile that covers the output rows exactly.
    // The trees were grown on power-of-two F, where every tile up to F covers them; at another F a
    // point's tile becomes the largest tile that does (F = 100: tile 8 -> 4, 25 threads; F = 47:
    // tile 1, 47 threads), which keeps the point's work per thread as close as the length allows.
    const int64_t len = p.layout.out_len();
    const bool swept_length = (len & (len - 1)) == 0;
    for (int i = leaf.first; i < leaf.first + leaf.count; ++i) {
        const auto &point = gate_points()[static_cast<size_t>(i)];
        if (!point) return std::nullopt;
        SegmentPoint segment = segment_point_of(*point);
        if (segment.tile == 1 || segment_tile_covers_rows(segment.tile, len)) return point;
        if (!swept_length) {
            segment.tile = segment_tile_for_rows(segment.tile, len);
            return segment_params(segment);
        }
    }
    return std::nullopt;
}

std::vector<int64_t> selector_anchor_features() {
    std::vector<int64_t> feats;
    for (const SelectorTree &t : kSelectorTrees) feats.push_back(t.feat);
    std::sort(feats.begin(), feats.end());
    return feats;
}

std::vector<ScheduleParams> selector_points(int64_t anchor) {
    std::vector<ScheduleParams> out;
    const auto &points = parsed_points();
    for (const SelectorTree &t : kSelectorTrees) {
        if (t.feat != anchor) continue;
        std::vector<int> stack{t.root};
        while (!stack.empty()) {
            const SelectorNode &n = kSelectorNodes[stack.back()];
            stack.pop_back();
            if (n.feature >= 0) {
                stack.push_back(n.left), stack.push_back(n.right);
                continue;
            }
            for (int i = n.first; i < n.first + n.count; ++i)
                if (points[static_cast<size_t>(i)] &&
                    std::find(out.begin(), out.end(), *points[static_cast<size_t>(i)]) == out.end())
                    out.push_back(*points[static_cast<size_t>(i)]);
        }
    }
    return out;
}

}  // namespace gsparse
