#!/usr/bin/env python3
"""Learns the default g-SpMM schedule selector from the zoo's candidate sweeps (training part only).

    python3 autotune/selector/train_selector.py DATA.json.gz [--depth 2 --min-leaf 4] [--no-cv] \
        [--emit schedules/spmm_selector_table.inc] [--report report.md]

DATA is collect_sweeps.py's output. For every swept feature length (an "anchor") the script grows one
cost-sensitive decision tree over graph statistics: a leaf holds the points with the least mean
regret over its graphs (regret = log(time / the graph's best time); a point a graph did not measure
counts as 4x slower), a split is the threshold of one statistic that lowers the two sides' summed
regret most. The tree is small (depth and leaf size bounded) and is checked by leave-one-family-out
cross-validation: every family is predicted by a tree grown without it, and the report gives the
slowdown against the best measured point, next to the expert default's.

--emit writes the trees as a C++ table that schedules/spmm_selector.cpp walks (GraphStats only: no
measurement, a few comparisons per call).
"""
import argparse
import gzip
import json
import math
import statistics
from datetime import date

MISSING_REGRET = math.log(4.0)
# The expert default (the hand-written rules of schedules/gpu_spmm.cpp, a different point per graph)
# is one more candidate: a leaf may keep it where no fixed point does better.
EXPERT = "expert"
LEAF_POINTS = 4  # ranked points per leaf: the runtime takes the first one valid for the problem

# Statistics the trees split on: (name, function of a GraphStats-like dict, how far outside the
# training graphs' range a problem may lie before the selector leaves it to the expert default).
# schedules/spmm_selector.cpp computes the same values from GraphStats, in the same order.
#   "log2":  +-1 (a factor of 2 beyond the smallest and largest seen). Nonzeros too: the full-scale
#            twins (79-124 M nonzeros, sources beyond L2) lost up to 2.4x against the expert rules
#            where the trees, grown on graphs up to 32 M nonzeros, still answered for them
#   "rows":  down by 1, up without bound
#   "free":  any value (shape statistics that vary freely within a family)
FEATURES = [
    ("log2_avg_row", lambda s: math.log2(max(s["avg_in_degree"], 1e-3)), "log2"),
    ("row_cov", lambda s: s["in_degree_cov"], "free"),
    ("log2_max_over_avg", lambda s: math.log2(max(s["max_in_degree"], 1) / max(s["avg_in_degree"], 1e-3)), "free"),
    ("log2_nnz", lambda s: math.log2(max(s["edges"], 1)), "log2"),
    ("log2_rows", lambda s: math.log2(max(s["num_dst"], 1)), "rows"),
    ("log2_cols_over_rows", lambda s: math.log2(max(s["num_src"], 1) / max(s["num_dst"], 1)), "log2"),
    ("col_cov", lambda s: s["out_degree_cov"], "free"),
    ("empty_row_share", lambda s: s["empty_row_share"], "free"),
]


def support(cases):
    """The range of every statistic the selector answers for: the training graphs' range widened by
    the feature's tolerance (FEATURES)."""
    box = []
    for fi, (_, _, kind) in enumerate(FEATURES):
        lo, hi = min(c.x[fi] for c in cases), max(c.x[fi] for c in cases)
        box.append({"log2": (lo - 1, hi + 1), "rows": (lo - 1, math.inf), "free": (-math.inf, math.inf)}[kind])
    return box


def inside(box, x):
    return all(lo <= v <= hi for (lo, hi), v in zip(box, x))


class Case:
    def __init__(self, graph, family, x, times, default):
        self.graph, self.family, self.x, self.times, self.default = graph, family, x, times, default
        self.best = min(times.values())

    def regret(self, point):
        t = self.times.get(point)
        return MISSING_REGRET if t is None else math.log(t / self.best)


def leaf_ranking(cases, points):
    scored = sorted((sum(c.regret(p) for c in cases), p) for p in points)
    return scored


def grow(cases, points, depth, min_leaf):
    ranking = leaf_ranking(cases, points)
    node = {"cost": ranking[0][0], "points": [p for _, p in ranking[:LEAF_POINTS]], "n": len(cases)}
    if depth == 0 or len(cases) < 2 * min_leaf:
        return node
    best = None
    for fi in range(len(FEATURES)):
        xs = sorted(set(c.x[fi] for c in cases))
        for lo, hi in zip(xs, xs[1:]):
            thr = (lo + hi) / 2
            left = [c for c in cases if c.x[fi] <= thr]
            right = [c for c in cases if c.x[fi] > thr]
            if len(left) < min_leaf or len(right) < min_leaf:
                continue
            cost = leaf_ranking(left, points)[0][0] + leaf_ranking(right, points)[0][0]
            if best is None or cost < best[0] - 1e-12:
                best = (cost, fi, thr, left, right)
    # A split must pay: at least 1% mean slowdown per graph it separates.
    if best is None or best[0] > node["cost"] - 0.01 * len(cases):
        return node
    _, fi, thr, left, right = best
    node.update({"feature": fi, "threshold": thr,
                 "left": grow(left, points, depth - 1, min_leaf), "right": grow(right, points, depth - 1, min_leaf)})
    return node


def predict(node, x, box=None):
    """The selected point; EXPERT outside the support box."""
    if box is not None and not inside(box, x):
        return EXPERT
    while "feature" in node:
        node = node["left"] if x[node["feature"]] <= node["threshold"] else node["right"]
    return node["points"][0]


def load(path):
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    by_feat = {}
    for c in data["cases"]:
        g = data["graphs"][c["graph"]]
        if g["split"] != "train":
            continue
        x = [fn(g["stats"]) for _, fn, _ in FEATURES]
        times = dict(c["times"])
        if c["default"]:
            times[EXPERT] = c["times"][c["default"]]
        by_feat.setdefault(c["feat"], []).append(Case(c["graph"], g["family"], x, times, c["default"]))
    return data, by_feat


def candidate_points(cases):
    points = set()
    for c in cases:
        points |= set(c.times)
    return sorted(points)


def slowdown(regrets):
    return math.exp(statistics.fmean(regrets)) - 1


def cross_validate(by_feat, depth, min_leaf):
    """Leave-one-family-out: regrets of the held-back family under a tree grown without it."""
    rows = []
    for feat, cases in sorted(by_feat.items()):
        points = candidate_points(cases)
        for fam in sorted({c.family for c in cases}):
            train = [c for c in cases if c.family != fam]
            tree, box = grow(train, points, depth, min_leaf), support(train)
            for c in cases:
                if c.family == fam:
                    rows.append((feat, c, c.regret(predict(tree, c.x, box))))
    return rows


def cv_report(by_feat, depth, min_leaf):
    """Markdown lines: the cross-validated slowdown of the selector against the expert default, by
    feature length and by family."""
    rows = cross_validate(by_feat, depth, min_leaf)
    report = [f"Trees of depth <= {depth}, >= {min_leaf} graphs a leaf. Slowdown against the best measured "
              "candidate of each graph (geometric mean), by feature length:", "",
              "| F | selector (cross-validated) | expert default | selector within 5% |", "|---|---|---|---|"]
    for feat in sorted(by_feat):
        sel = [x for f, _, x in rows if f == feat]
        dflt = [c.regret(c.default) for c in by_feat[feat] if c.default]
        report.append(f"| {feat} | {100 * slowdown(sel):.1f}% | {100 * slowdown(dflt):.1f}% | "
                      f"{sum(x <= math.log(1.05) for x in sel) / len(sel):.0%} |")
    report += ["", "By family (all F):", "", "| family | selector (cross-validated) | expert default |", "|---|---|---|"]
    for fam in sorted({c.family for _, c, _ in rows}):
        sel = [x for _, c, x in rows if c.family == fam]
        dflt = [c.regret(c.default) for _, c, _ in rows if c.family == fam and c.default]
        report.append(f"| {fam} | {100 * slowdown(sel):.1f}% | {100 * slowdown(dflt):.1f}% |")
    return report


def emit_cpp(trees, out, source, prefix="kSelector", script="autotune/selector/train_selector.py"):
    """Writes the trees as the C++ table schedules/spmm_selector.cpp walks: arrays <prefix>Features,
    <prefix>Points, <prefix>Nodes and <prefix>Trees."""
    lines = [
        f"// Generated by {script} from {source} ({date.today().isoformat()}).",
        "// Do not edit: rerun the script. One decision tree per swept feature length; schedules/spmm_selector.cpp",
        "// walks them. Nodes: feature index (-1: leaf), threshold, left and right child (<= / >), first",
        f"// and count of the leaf's ranked points in {prefix}Points.",
        "",
        "// clang-format off",
    ]
    points, nodes, roots = [], [], []

    def flatten(node):
        i = len(nodes)
        nodes.append(None)
        if "feature" in node:
            l, r = flatten(node["left"]), flatten(node["right"])
            nodes[i] = (node["feature"], node["threshold"], l, r, 0, 0)
        else:
            first = len(points)
            points.extend(node["points"])
            nodes[i] = (-1, 0.0, -1, -1, first, len(node["points"]))
        return i

    for feat, (tree, box) in sorted(trees.items()):
        roots.append((feat, flatten(tree), box))
    lines.append(f"static constexpr const char *{prefix}Features[] = {{" +
                 ", ".join('"' + n + '"' for n, _, _ in FEATURES) + "};")
    lines.append(f"static constexpr const char *{prefix}Points[] = {{")
    lines += ['    "' + p + '",' for p in points]
    lines.append("};")
    lines.append(f"static constexpr SelectorNode {prefix}Nodes[] = {{")
    lines += [f"    {{{f}, {round(t, 6)!r}, {l}, {r}, {a}, {n}}}," for f, t, l, r, a, n in nodes]
    lines.append("};")
    lines.append(f"static constexpr SelectorTree {prefix}Trees[] = {{")
    def num(v):
        return "1e300" if v == math.inf else "-1e300" if v == -math.inf else repr(round(v, 6))

    for feat, root, box in roots:
        lines.append(f"    {{{feat}, {root}, {{{', '.join(num(lo) for lo, _ in box)}}}, "
                     f"{{{', '.join(num(hi) for _, hi in box)}}}}},")
    lines.append("};")
    lines.append("// clang-format on")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--min-leaf", type=int, default=4)
    ap.add_argument("--emit")
    ap.add_argument("--report")
    ap.add_argument("--search", action="store_true", help="cross-validate depth 0-4 x min leaf 2-5 first")
    ap.add_argument("--no-cv", action="store_true", help="emit only, without the cross-validation report")
    a = ap.parse_args()
    data, by_feat = load(a.data)
    report = [f"# Default selector: leave-one-family-out cross-validation ({data['device']}, {data['op']})", ""]
    if a.search:
        report += ["| depth | min leaf | mean slowdown vs best | within 5% | within 20% |", "|---|---|---|---|---|"]
        for depth in range(0, 5):
            for min_leaf in (2, 3, 4, 5):
                rows = cross_validate(by_feat, depth, min_leaf)
                r = [x for _, _, x in rows]
                report.append(f"| {depth} | {min_leaf} | {100 * slowdown(r):.1f}% | "
                              f"{sum(x <= math.log(1.05) for x in r) / len(r):.0%} | "
                              f"{sum(x <= math.log(1.2) for x in r) / len(r):.0%} |")
        report.append("")
    if not a.no_cv:
        report += cv_report(by_feat, a.depth, a.min_leaf)
        text = "\n".join(report) + "\n"
        print(text)
        if a.report:
            with open(a.report, "w") as f:
                f.write(text)
    if a.emit:
        trees = {feat: (grow(cases, candidate_points(cases), a.depth, a.min_leaf), support(cases))
                 for feat, cases in by_feat.items()}
        emit_cpp(trees, a.emit, a.data.split("/")[-1])
        print(f"{len(trees)} trees -> {a.emit}")


if __name__ == "__main__":
    main()
