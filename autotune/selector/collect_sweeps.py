#!/usr/bin/env python3
"""Collects the candidate sweeps of run_zoo_sweeps.sh into one compact dataset for train_selector.py.

    python3 autotune/selector/collect_sweeps.py SWEEP_DIR [SWEEP_DIR ...] -o data.json.gz

Every SWEEP_DIR is a $SWEEP_DIR of run_zoo_sweeps.sh (graphs.jsonl, <part>/*-candidates.json). The
output keeps, per graph and feature length, the median time of every measured point (as its
canonical "gpu_spmm{...}" string), the expert default's point, and each graph's statistics and split:

    {"device": ..., "op": ..., "graphs": {name: {"split", "family", "stats"}},
     "cases": [{"graph", "feat", "default", "times": {point: ms}}]}
"""
import argparse
import glob
import gzip
import json
import os
import re


def point_string(entry):
    return entry["schedule"] + "{" + ", ".join(f"{k}={v}" for k, v in sorted(entry["params"].items())) + "}"


def zoo_families(manifest):
    families = {}
    with open(manifest) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3 and not line.startswith("#"):
                families[fields[0]] = fields[2]
    return families


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--manifest", default=os.path.join(os.path.dirname(__file__), "../../datasets/zoo/zoo.txt"))
    a = ap.parse_args()
    families = zoo_families(a.manifest)
    graphs, cases, device, op = {}, {}, None, None
    for d in a.dirs:
        stats_file = os.path.join(d, "graphs.jsonl")
        if os.path.exists(stats_file):
            with open(stats_file) as f:
                for line in f:
                    g = json.loads(line)
                    stats = {k: v for k, v in g["stats"].items() if k != "file"}
                    graphs[g["graph"]] = {"split": g["split"], "family": families.get(g["graph"], "?"), "stats": stats}
        for path in sorted(glob.glob(os.path.join(d, "*", "*-candidates.json"))):
            with open(path) as f:
                r = json.load(f)
            device, op = r["device"], r["op"]
            feat = r["lhs_feat"][0]
            name = r["graph"]["name"] if isinstance(r["graph"], dict) else r["graph"]
            key = (name, feat)
            times = cases.setdefault(key, {"graph": name, "feat": feat, "default": None, "times": {}})["times"]
            for entry in r["candidates"] + [r["expert_default"]]:
                if entry and entry.get("ok"):
                    times[point_string(entry)] = round(entry["median_ms"], 6)
            if r["expert_default"] and r["expert_default"].get("ok"):
                cases[key]["default"] = point_string(r["expert_default"])
    missing = sorted({g for g, _ in cases} - set(graphs))
    if missing:
        raise SystemExit(f"no statistics for {missing}: pass the sweep folder holding graphs.jsonl")
    out = {"device": device, "op": op, "graphs": graphs,
           "cases": sorted(cases.values(), key=lambda c: (c["graph"], c["feat"]))}
    with gzip.open(a.out, "wt") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{len(out['cases'])} cases over {len(graphs)} graphs -> {a.out}")


if __name__ == "__main__":
    main()
