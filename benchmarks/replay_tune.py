#!/usr/bin/env python3
"""Search strategies replayed on recorded exhaustive sweeps (the paper's Fig. 11 with many seeds).

  replay_tune.py EXHAUSTIVE_JSON... [--seeds 20] [--model [NAME=]PREFIX ...] [--graph-dir DIR]
                 [--tune BIN] [--data BIN] [--out-dir DIR] [--strategy NAME=ARGS ...] [--skip-random-seeds]

Each input is a gsparse-tune --json result of --mode exhaustive (or one graph's result of
gsparse-sweep) of g-SpMM or g-SDDMM (its op names the operator), plain or gzip-compressed
(.json.gz), on a dataset twin (its graph name says which twin, scale and id order) or a graph of
the zoo (named by its member name: read from --graph-dir/NAME.gcsr when there, else generated with
`gsparse-data zoo gen`). For every seed, gsparse-tune --replay runs the genetic search (with each
--model, and without one) and random sampling with the same number of measured candidates over the
sweep's recorded times: no kernel is compiled or timed, so the comparison isolates the search from
measurement noise. Per graph the report gives how often each strategy ends within 5% of the sweep's
best and its mean ratio to it. Writes replay.md and replay.json into DIR (default: the first
input's folder).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# best_ms: the sweep's best (fastest fully timed candidate or the expert default)
from report_tune import best_ms, read_result_text

ROOT = Path(__file__).resolve().parent.parent


def twin_of(name: str):
    """('reddit', '1', 'shuffled') from 'reddit twin (scale 1, shuffled ids)', else None."""
    m = re.match(r"(\S+) twin \(scale ([0-9.e+-]+), (\w+) ids\)", name)
    return m.groups() if m else None


def graph_file_of(args, name: str, tmp: str) -> str:
    """The graph file of a result's graph name: a twin generated into tmp, a zoo member from
    --graph-dir or generated into tmp."""
    twin = twin_of(name)
    if twin:
        dataset, scale, order = twin
        path = f"{tmp}/{dataset}-{scale}-{order}.gcsr"
        if not Path(path).exists():
            subprocess.run([args.data, "gen", dataset, "--scale", scale, "--order", order, "-o", path],
                           check=True, capture_output=True)
        return path
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise SystemExit(f"replay_tune.py: '{name}' is neither a dataset twin's name nor a zoo member's")
    if args.graph_dir and (Path(args.graph_dir) / f"{name}.gcsr").exists():
        return str(Path(args.graph_dir) / f"{name}.gcsr")
    path = Path(tmp) / f"{name}.gcsr"
    if not path.exists():
        done = subprocess.run([args.data, "zoo", "gen", name, "-o", tmp, "--quiet"], capture_output=True, text=True)
        if done.returncode != 0 or not path.exists():
            raise SystemExit(f"replay_tune.py: '{name}' is neither a dataset twin's name nor a zoo member: "
                             f"{done.stderr.strip()}")
    return str(path)


def models_of(specs):
    """{strategy name: model prefix} of --model [NAME=]PREFIX arguments."""
    models = {}
    for spec in specs or []:
        name, prefix = spec.split("=", 1) if "=" in spec else ("cost model", spec)
        models[f"genetic, {name}"] = prefix
    return models


def op_args(op: str):
    """gsparse-tune flags of a result's op: 'spmm copy_u_sum', 'spmm u_mul_e_max', 'sddmm u_dot_v'."""
    targets = {"u": "u", "v": "v", "e": "e"}
    m = re.fullmatch(r"sddmm (\w)_(\w+)_(\w)", op)
    if m and m.group(1) in targets and m.group(3) in targets:
        return ["--op", "sddmm", "--binary", m.group(2), "--lhs-target", m.group(1), "--rhs-target", m.group(3)]
    m = re.fullmatch(r"spmm copy_(\w)_(\w+)", op)
    if m:
        return ["--op", "spmm", "--binary", "copy_lhs" if m.group(1) == "u" else "copy_rhs", "--reduce", m.group(2)]
    m = re.fullmatch(r"spmm u_(\w+)_e_(\w+)", op)
    if m:
        return ["--op", "spmm", "--binary", m.group(1), "--reduce", m.group(2)]
    raise SystemExit(f"replay_tune.py: cannot replay op '{op}'")


def load_result(path: str, tmp: str):
    """The result and a plain JSON file of it (gsparse-tune --replay reads plain JSON)."""
    text = read_result_text(path)
    if not path.endswith(".gz"):
        return json.loads(text), path
    plain = str(Path(tmp) / Path(path).name[:-3])
    Path(plain).write_text(text)
    return json.loads(text), plain


def tune(args, graph_file, feat, mode, seed, extra):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([args.tune, "--graph", graph_file, "--target", "cuda", "--feat", str(feat), "--mode", mode,
                        "--seed", str(seed), "--replay", args.current, "--quiet", "--json", out.name] + extra,
                       check=True, capture_output=True)
        return json.load(open(out.name))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--model", action="append",
                    help="cost model [NAME=]PREFIX (PREFIX.pt + PREFIX.json); repeat to compare several")
    ap.add_argument("--graph-dir", help="folder of zoo graphs as NAME.gcsr (generated when missing)")
    ap.add_argument("--tune", default=str(ROOT / "build" / "autotune" / "gsparse-tune"))
    ap.add_argument("--data", default=str(ROOT / "build" / "datasets" / "gsparse-data"))
    ap.add_argument("--out-dir")
    ap.add_argument("--strategy", action="append", default=[],
                    help="NAME=ARGS: also replay the genetic search with these gsparse-tune arguments, e.g. "
                         "'no polish=--model autotune/models/h100_spmm --polish 0'")
    ap.add_argument("--skip-random-seeds", action="store_true",
                    help="leave out the genetic search without a model (seeded at random)")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.inputs:
            run, plain = load_result(path, tmp)
            if run.get("mode") != "exhaustive":
                print(f"replay_tune.py: {path} is not an exhaustive tune; skipped", file=sys.stderr)
                continue
            feat = run["lhs_feat"][0]
            graph_file = graph_file_of(args, run["graph"]["name"], tmp)
            args.current = plain
            best = best_ms(run)
            op = op_args(run.get("op", "spmm copy_u_sum"))
            strategies = {name: op + ["--model", prefix] for name, prefix in models_of(args.model).items()}
            if not args.skip_random_seeds:
                strategies["genetic, random seeds"] = op + ["--model", "none"]  # not the shipped model (--model auto)
            for spec in args.strategy:
                name, _, extra_args = spec.partition("=")
                strategies[name] = op + shlex.split(extra_args)
            row = {"graph": run["graph"]["name"], "op": run.get("op", ""), "feat": feat, "valid_points": run["valid_size"],
                   "exhaustive_best_ms": best, "seeds": args.seeds, "device": run.get("device", "")}
            for name, extra in strategies.items():
                ratios, randoms, trials = [], [], []
                for seed in range(1, args.seeds + 1):
                    g = tune(args, graph_file, feat, "genetic", seed, extra)
                    n = len(g["candidates"])
                    r = tune(args, graph_file, feat, "random", seed, op + ["--budget", str(n)])
                    ratios.append(g["best"]["mean_ms"] / best)
                    randoms.append(r["best"]["mean_ms"] / best)
                    trials.append(n)
                row[name] = {"within_5pct": sum(x <= 1.05 for x in ratios) / len(ratios),
                             "mean_ratio": statistics.mean(ratios), "worst_ratio": max(ratios),
                             "random_within_5pct": sum(x <= 1.05 for x in randoms) / len(randoms),
                             "random_mean_ratio": statistics.mean(randoms), "random_worst_ratio": max(randoms),
                             "mean_trials": statistics.mean(trials)}
                print(f"{row['graph']} F={feat} {name}: {row[name]}", flush=True)
            rows.append(row)
    if not rows:
        print("replay_tune.py: error: no exhaustive tune among the inputs", file=sys.stderr)
        return 1
    out = Path(args.out_dir) if args.out_dir else Path(args.inputs[0]).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    (out / "replay.json").write_text(json.dumps(rows, indent=1))
    lines = [f"# Search strategies replayed on exhaustive sweeps ({rows[0]['device']})", "",
             f"{args.seeds} seeds per case. Each search runs over the sweep's recorded mean times (gsparse-tune "
             "--replay: nothing compiled or timed); random sampling measures as many candidates as the genetic "
             "search of the same seed. 'within 5%': share of seeds whose best is within 5% of the sweep's best; "
             "'mean' / 'worst': time over the sweep's best.", "",
             "| op | graph | F | strategy | trials | within 5% | mean | worst | random: within 5% | mean | worst |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        strategies = list(models_of(args.model)) + ["genetic, random seeds"]
        strategies += [spec.partition("=")[0] for spec in args.strategy]
        for name in strategies:
            if name not in r:
                continue
            s = r[name]
            lines.append(f"| {r['op']} | {r['graph']} | {r['feat']} | {name} | {s['mean_trials']:.0f} | {100 * s['within_5pct']:.0f}% | "
                         f"{s['mean_ratio']:.3f} | {s['worst_ratio']:.3f} | {100 * s['random_within_5pct']:.0f}% | "
                         f"{s['random_mean_ratio']:.3f} | {s['random_worst_ratio']:.3f} |")
    (out / "replay.md").write_text("\n".join(lines) + "\n")
    print(f"report written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
