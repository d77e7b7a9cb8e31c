#!/usr/bin/env python3
"""Learns when g-SpMM's default divides the edges into equal runs (spmm_segments) instead of running
the row schedule the selector picks, from measurements of both on the zoo's training part.

    python3 autotune/selector/train_segment_gate.py DATA.json.gz [--depth 1 --min-leaf 8 --margin 0.05] \
        [--emit schedules/spmm_segments_gate_table.inc] [--report report.md]

DATA holds, per training graph and feature length, the times of the default ("default", the row
schedule of the learned selector) and of spmm_segments{run=R} for a few R, measured in one process
(gsparse-bench-spmm with benchmarks/schedules/zoo_train_segments.json), plus the graphs' statistics
(`gsparse-data stats --json`). Per swept feature length the script grows one cost-sensitive tree over
the selector's statistics (train_selector.py's FEATURES and grow()) whose leaves rank "default" and
the segment points; a leaf whose first point is a segment point sends the problems that reach it to
spmm_segments. The default's times count `margin` faster than measured, so a leaf takes the segment
form (atomic adds: the order of additions varies between calls) only where it wins by more than that.

Leave-one-family-out cross-validation reports the slowdown against the faster of the two forms per
case, for the gate and for the default alone. --emit writes the trees as kSegmentGate* arrays that
schedules/spmm_selector.cpp walks (select_spmm_segments).
"""
import argparse
import gzip
import json
import math

from train_selector import FEATURES, Case, grow, predict, slowdown, support, emit_cpp

DEFAULT = "default"


def pooled(by_feat, bands):
    """The cases of every feature length of a band together (trees are grown per band and emitted
    for each of its feature lengths): neighbouring widths behave alike, and a band's tree sees its
    graphs at every width of it instead of at one."""
    out = {}
    for band in bands:
        cases = [c for f in band for c in by_feat.get(f, [])]
        for f in band:
            if f in by_feat:
                out[f] = cases
    for f, cases in by_feat.items():
        out.setdefault(f, cases)
    return out


def load(path, margin):
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    by_feat = {}
    for c in data["cases"]:
        g = data["graphs"][c["graph"]]
        if g["split"] != "train" or DEFAULT not in c["times"] or len(c["times"]) < 2:
            continue
        x = [fn(g["stats"]) for _, fn, _ in FEATURES]
        measured = dict(c["times"])
        biased = dict(measured)
        biased[DEFAULT] = measured[DEFAULT] * (1 - margin)
        case = Case(c["graph"], g["family"], x, biased, DEFAULT)
        case.measured = measured
        by_feat.setdefault(c["feat"], []).append(case)
    return data, by_feat


def points_of(cases):
    return sorted({p for c in cases for p in c.times})


def measured_regret(case, point):
    """log(time of point / the faster of the measured forms), on unbiased times."""
    return math.log(case.measured.get(point, 4 * max(case.measured.values())) / min(case.measured.values()))


def cross_validate(by_feat, depth, min_leaf, bands):
    rows = []
    grown_on = pooled(by_feat, bands)
    for feat, cases in sorted(by_feat.items()):
        points = points_of(grown_on[feat])
        for fam in sorted({c.family for c in cases}):
            train = [c for c in grown_on[feat] if c.family != fam]
            tree, box = grow(train, points, depth, min_leaf), support(train)
            for c in cases:
                if c.family == fam:
                    chosen = predict(tree, c.x, box)
                    chosen = DEFAULT if chosen not in c.measured else chosen  # outside the support
                    rows.append((feat, c, chosen))
    return rows


def report_lines(by_feat, depth, min_leaf, margin, bands):
    rows = cross_validate(by_feat, depth, min_leaf, bands)
    out = [f"Trees of depth <= {depth}, >= {min_leaf} graphs a leaf, segment form only where it wins by more than "
           f"{margin:.0%}. Leave-one-family-out: every family predicted by trees grown without it. Slowdown against "
           "the faster of the default row schedule and the best segment run, geometric mean:", "",
           "| F | cases | gate (cross-validated) | default alone | segments chosen | chosen and slower than default |",
           "|---|---:|---:|---:|---:|---:|"]
    for feat in sorted(by_feat):
        sel = [(c, p) for f, c, p in rows if f == feat]
        gate = [measured_regret(c, p) for c, p in sel]
        dflt = [measured_regret(c, DEFAULT) for c, _ in sel]
        chosen = [(c, p) for c, p in sel if p != DEFAULT]
        worse = [1 for c, p in chosen if c.measured[p] > c.measured[DEFAULT]]
        out.append(f"| {feat} | {len(sel)} | {100 * slowdown(gate):.1f}% | {100 * slowdown(dflt):.1f}% | "
                   f"{len(chosen)} | {len(worse)} |")
    out += ["", "By family (all F): gate / default alone", "", "| family | gate | default alone |", "|---|---:|---:|"]
    for fam in sorted({c.family for _, c, _ in rows}):
        sel = [(c, p) for _, c, p in rows if c.family == fam]
        out.append(f"| {fam} | {100 * slowdown([measured_regret(c, p) for c, p in sel]):.1f}% | "
                   f"{100 * slowdown([measured_regret(c, DEFAULT) for c, _ in sel]):.1f}% |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--min-leaf", type=int, default=8)
    ap.add_argument("--margin", type=float, default=0.05, help="how much faster a segment run must be (0.05: 5%%)")
    ap.add_argument("--bands", default="1,2:4,8:16,32:64,128,256",
                    help="feature lengths whose cases grow one tree together (colon-separated comma lists)")
    ap.add_argument("--emit")
    ap.add_argument("--report")
    a = ap.parse_args()
    if not 0 <= a.margin < 1:
        ap.error(f"--margin must lie in [0, 1), got {a.margin}")
    try:
        bands = [[int(f) for f in band.split(",") if f] for band in a.bands.split(":") if band]
    except ValueError:
        ap.error(f"--bands: comma lists of feature lengths separated by colons, got '{a.bands}'")
    data, by_feat = load(a.data, a.margin)
    if not by_feat:
        ap.error(f"{a.data} holds no training case with the default and a segment point")
    text = "\n".join([f"# Segment gate: leave-one-family-out cross-validation ({data['device']}, {data['op']})", ""]
                     + report_lines(by_feat, a.depth, a.min_leaf, a.margin, bands)) + "\n"
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    if a.emit:
        trees = {feat: (grow(cases, points_of(cases), a.depth, a.min_leaf), support(cases))
                 for feat, cases in pooled(by_feat, bands).items()}
        emit_cpp(trees, a.emit, a.data.split("/")[-1], prefix="kSegmentGate",
                 script="autotune/selector/train_segment_gate.py")
        print(f"{len(trees)} trees -> {a.emit}")


if __name__ == "__main__":
    main()
