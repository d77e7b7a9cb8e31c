#!/usr/bin/env python3
"""Collects gsparse-bench-spmm runs of the default against spmm_segments points (the segment gate's
training data) into one compact file for train_segment_gate.py.

    python3 autotune/selector/collect_segment_runs.py BENCH.json [BENCH.json ...] --stats graphs.jsonl \
        [--merge OLD.json.gz] -o autotune/selector/data/<device>-segment-gate-train-<date>.json.gz

BENCH files: gsparse-bench-spmm --json outputs run with benchmarks/schedules/zoo_train_segments.json
(the row default, "default-rows", and spmm_segments{run=R} points; "default" stands for the row
default in runs of builds without the gate). graphs.jsonl: one {"graph", "stats"} line per
graph (`gsparse-data stats --json`). Split and family come from datasets/zoo/zoo.txt; graphs that are
not zoo members are refused. --merge adds the cases of an earlier file (a case measured again
replaces the old one).
"""
import argparse
import gzip
import json
import os

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "zoo", "zoo.txt")


def zoo_members():
    members = {}
    with open(ZOO) as f:
        for line in f:
            parts = line.split()
            if parts and not line.startswith("#"):
                members[parts[0]] = {"split": "train" if parts[1] == "train" else "heldout", "family": parts[2]}
    return members


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--stats", required=True)
    ap.add_argument("--merge")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    members = zoo_members()
    stats = {}
    with open(a.stats) as f:
        for line in f:
            if line.strip():
                j = json.loads(line)
                j["stats"].pop("file", None)
                stats[j["graph"]] = j["stats"]
    out = {"cases": [], "graphs": {}}
    if a.merge:
        with gzip.open(a.merge, "rt") as f:
            out = json.load(f)
    cases = {(c["graph"], c["feat"]): c for c in out["cases"]}
    for path in a.bench:
        with open(path) as f:
            doc = json.load(f)
        meta = doc["metadata"]
        out["device"] = "cuda:" + meta["device"]
        out["op"] = "spmm copy_u_sum"
        out["source"] = ("gsparse-bench-spmm: the default and spmm_segments{run=R} measured in one process "
                         "(benchmarks/schedules/zoo_train_segments.json)")
        for r in doc["records"]:
            name = r["graph"]
            if name not in members:
                raise SystemExit(f"collect_segment_runs.py: {name} ({path}) is not a zoo member")
            if name not in stats:
                raise SystemExit(f"collect_segment_runs.py: no statistics for {name} in {a.stats}")
            if r["op"] != "copy_lhs:sum":
                continue
            # The row default: the point "default-rows", or "default" of a build without the gate.
            entries = {e["schedule"]: e for e in r.get("results", [])
                       if e.get("competitor") == "gsparse" and e.get("ok") and e.get("check", {}).get("ok", True)}
            rows = entries.get("default-rows") or entries.get("default")
            times, default_point = {}, None
            if rows:
                times["default"] = round(rows["median_ms"], 6)
                default_point = rows.get("resolved_schedule")
            for point, e in entries.items():
                if point.startswith("spmm_segments"):
                    times[point] = round(e["median_ms"], 6)
            if "default" in times and len(times) > 1:
                cases[(name, r["F"])] = {"graph": name, "feat": r["F"], "times": times, "default_point": default_point}
            out["graphs"][name] = {**members[name], "stats": stats[name]}
    out["cases"] = [cases[k] for k in sorted(cases)]
    with gzip.open(a.out, "wt") as f:
        json.dump(out, f)
    print(f"{len(out['cases'])} cases of {len(out['graphs'])} graphs -> {a.out}")


if __name__ == "__main__":
    main()
