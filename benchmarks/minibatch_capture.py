#!/usr/bin/env python3
"""Mini-batch training steps captured as CUDA graphs (gsparse.capture), gsparse against PyG.

The models, inputs and protocol of benchmarks/minibatch.py (same weights, same sampled blocks with
fan-outs 25/10, and 15/10/5 on ogbn-products, and molecule batches, interleaved timed steps, CUDA
events, median), each library's step run two ways:
  eager     as in minibatch.py: the step's graphs as the sampler produced them;
  captured  the step's graphs padded into fixed-capacity buffers (gsparse.capture.BlockBuffers,
            BatchBuffers: identical padded inputs for both libraries), the step (forward, loss on the
            real rows, backward, Adam with capturable=True) captured once as a CUDA graph; a timed
            step loads the batch into the buffers (a few copies, the feature rows included) and
            replays.
A library whose step cannot be captured (a host synchronisation inside, e.g. a boolean mask) is
reported with the error. Before timing, the captured step's loss is checked against the eager
forward pass on the unpadded batch with the same weights.

    python3 benchmarks/minibatch_capture.py --graph reddit=PATH [--graph ogbn-products=PATH] [--out-root DIR]
"""

import argparse
import copy
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minibatch as mb  # noqa: E402
import gsparse  # noqa: E402
from gsparse.capture import BatchBuffers, BlockBuffers, CapturedStep  # noqa: E402
from gsparse.sampling import NeighborSampler  # noqa: E402

LIBS = ("gsparse", "pyg")
log = mb.log


def captured_step(opt, loss_of):
    """A training step over fixed buffers: loss_of() is the forward pass and loss on the real rows."""
    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        opt.step()
        return loss
    return step


def captured_block_step(lib, model, opt, buffers):
    adjs = buffers.adjs if lib == "gsparse" else buffers.edge_indices
    return captured_step(opt, lambda: F.cross_entropy(model(buffers.x, adjs())[: buffers.batch_size], buffers.y))


def captured_molecule_step(lib, model, opt, buffers):
    adj = buffers.graph if lib == "gsparse" else (lambda: buffers.edge_index)
    return captured_step(opt, lambda: F.cross_entropy(
        model(buffers.x, adj(), buffers.batch, buffers.num_graphs)[: buffers.max_graphs], buffers.y))


def eager_loss(workload, lib, model, item):
    with torch.no_grad():
        if workload == "blocks":
            if lib == "gsparse":
                adjs = [(gsparse.Graph.from_csr(rp, ci, num_src=s[0], dynamic=True, validate=False), s)
                        for rp, ci, s, _ in item["csrs"]]
            else:
                adjs = item["blocks"]
            return F.cross_entropy(model(item["x"], adjs), item["y"]).item()
        adj = gsparse.Graph(item["ei"], num_nodes=item["n"]) if lib == "gsparse" else item["ei"]
        return F.cross_entropy(model(item["x"], adj, item["batch"], 128), item["y"]).item()


def run_case(workload, make_model, pool, load, make_captured, make_eager, args):
    """Per library: eager and captured step times (interleaved), the loss check, errors. Every
    library's step is captured before any captured step replays; the case's graphs are released at
    its end."""
    torch.manual_seed(args.seed)
    base = make_model("pyg")
    res = {}
    timed = {}
    captures = {}
    for lib in args.libs.split(","):
        res[lib] = {}
        model = make_model(lib)
        if lib == "gsparse":
            mb.copy_weights(base, model)
        else:
            model.load_state_dict(base.state_dict())
        if "eager" in args.modes:
            em = copy.deepcopy(model)
            eager = make_eager(lib, em, torch.optim.Adam(em.parameters(), lr=0.01))
            for i in range(args.warmup):
                eager(pool[i % len(pool)])
            timed[(lib, "eager")] = lambda item, eager=eager: eager(item)
        if "captured" not in args.modes:
            continue
        cm = copy.deepcopy(model)
        try:
            if args.trace:
                log(f"      capturing {lib}")
                torch.cuda.synchronize()
            step = make_captured(lib, cm, torch.optim.Adam(cm.parameters(), lr=0.01, capturable=True))
            load(pool[0])
            captures[lib] = (CapturedStep(step, warmup=args.warmup), cm)
        except Exception as e:  # noqa: BLE001 - recorded: a step that cannot be captured
            msg = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
            res[lib]["capture_error"] = msg
            log(f"    {lib}: not captured: {msg}")
            torch.cuda.synchronize()
    for lib, (captured, cm) in captures.items():
        # The loss check: the replay's loss (before its update) against an eager forward pass on
        # the unpadded batch with the same weights.
        item = pool[1 % len(pool)]
        if not args.no_loss_check:
            load(item)
            snapshot = copy.deepcopy(cm)
            got = captured().item()
            want = eager_loss(workload, lib, snapshot, item)
            del snapshot
            res[lib]["loss_captured"], res[lib]["loss_eager"] = got, want
            res[lib]["loss_ok"] = abs(got - want) <= 1e-4 * max(1.0, abs(want))
            if args.trace:
                log(f"      {lib} loss check {got} vs {want}")

        def replay(item, captured=captured):
            load(item)
            captured()
        timed[(lib, "captured")] = replay
    times = {k: [] for k in timed}
    keys = list(timed)
    torch.cuda.synchronize()
    for i in range(args.runs):
        for k in (keys if i % 2 == 0 else keys[::-1]):
            if args.trace:
                log(f"      step {i} {k}")
            times[k].append(mb.time_step_once(timed[k], pool[i % len(pool)]))
    for (lib, how), ts in times.items():
        res[lib][f"{how}_ms"] = statistics.median(ts)
    timed.clear()
    captures.clear()
    torch.cuda.synchronize()
    for lib in res:
        r = res[lib]
        log(f"    {lib}: eager {r.get('eager_ms', float('nan')):.3f} ms, captured "
            + (f"{r['captured_ms']:.3f} ms (loss {r.get('loss_captured', float('nan')):.5f} vs eager "
               f"{r.get('loss_eager', float('nan')):.5f})"
               if "captured_ms" in r else "-"))
    return res


def block_cases(name, path, fanout_sets, args, device):
    feat, classes = mb.TWINS[name]
    log(f"loading {name} from {path}")
    g = gsparse.Graph.load(path)
    row_ptr, col_idx, _ = g.csr(device)
    n = g.num_dst
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    x_all = torch.randn(n, feat, generator=gen).to(device)
    y_all = torch.randint(0, classes, (n,), generator=gen).to(device)
    cases = []
    for fanouts in fanout_sets:
        sampler = NeighborSampler((row_ptr, col_idx), fanouts, seed=args.seed, device=device)
        seeds_all = torch.randperm(n, generator=gen)[: args.batch * args.pool].to(device)
        pool = mb.block_pool(sampler, seeds_all, x_all, y_all, fanouts, args.pool, args.batch)
        buffers = BlockBuffers(args.batch, fanouts, device, num_features=feat, num_nodes=n)

        def load(item, buffers=buffers):
            load_blocks(buffers, item)

        for kind in args.models.split(","):
            log(f"  {kind} {'/'.join(map(str, fanouts))}")

            def make_model(lib, kind=kind, layers=len(fanouts)):
                return mb.BlockNet(kind, lib, feat, args.hidden, classes, layers).to(device)

            res = run_case("blocks", make_model, pool, load,
                           lambda lib, m, o, buffers=buffers: captured_block_step(lib, m, o, buffers), mb.block_step,
                           args)
            cases.append({"workload": "blocks", "model": kind, "graph": name, "fanouts": fanouts,
                          "capacity": buffers.sizes, **flatten(res)})
        del pool, buffers
    del g, row_ptr, col_idx, x_all
    torch.cuda.empty_cache()
    return cases


def load_blocks(buffers, item):
    buffers.load(item["batch"], item["x"], item["y"], edge_index=True)


def molecule_buffers(device):
    """Buffers for minibatch.py's molecule batches: 128 graphs of at most 50 nodes, 55 edge pairs."""
    return BatchBuffers(128, 128 * 50, 2 * 55 * 128, device, num_features=32)


def load_molecules(buffers, item):
    buffers.load(item["ei"], item["batch"], item["n"], item["x"], item["y"])


def molecule_cases(args, device):
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    pool = mb.molecule_pool(gen, device, args.pool)
    buffers = molecule_buffers(device)

    def load(item):
        load_molecules(buffers, item)

    cases = []
    for kind in ("gin", "gcn"):
        log(f"  molecules {kind}")

        def make_model(lib, kind=kind):
            return mb.GraphNet(kind, lib, 32, 128, 10, 3, True).to(device)

        res = run_case("molecules", make_model, pool, load,
                       lambda lib, m, o: captured_molecule_step(lib, m, o, buffers), mb.molecule_step, args)
        cases.append({"workload": "molecules", "model": kind, "graph": "batched-small", **flatten(res)})
    return cases


def flatten(res):
    out = {}
    for lib, r in res.items():
        for k, v in r.items():
            out[f"{k}_{lib}"] = v
    return out


def write_report(out_dir, meta, cases):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"meta": meta, "cases": cases}, f, indent=1)
    lines = [f"# Mini-batch steps captured as CUDA graphs, gsparse vs PyG ({meta['device']}, {meta['date']})", "",
             "Median step, ms (CUDA events; captured = load the batch into fixed buffers + replay); "
             "see benchmarks/minibatch_capture.py.", "",
             "| workload | model | graph | fan-outs | gsparse eager | gsparse captured | PyG eager | PyG captured | "
             "gsparse captured vs PyG's best | loss check (gsparse / PyG) |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---|"]
    for c in cases:
        def ms(key):
            return f"{c[key]:.3f}" if key in c else "not capturable"
        pyg = [v for v in (c.get("eager_ms_pyg"), c.get("captured_ms_pyg")) if v is not None]
        ours = c.get("captured_ms_gsparse")
        ratio = f"{min(pyg) / ours:.2f}x" if ours and pyg else "-"
        checks = " / ".join("ok" if c.get(f"loss_ok_{lib}") else ("-" if f"loss_ok_{lib}" not in c else "MISMATCH")
                            for lib in LIBS)
        fo = "/".join(map(str, c["fanouts"])) if "fanouts" in c else "-"
        lines.append(f"| {c['workload']} | {c['model']} | {c['graph']} | {fo} | {ms('eager_ms_gsparse')} | "
                     f"{ms('captured_ms_gsparse')} | {ms('eager_ms_pyg')} | {ms('captured_ms_pyg')} | {ratio} | {checks} |")
    errors = [(c["model"], c["graph"], lib, c[f"capture_error_{lib}"]) for c in cases for lib in LIBS
              if f"capture_error_{lib}" in c]
    if errors:
        lines += ["", "Not capturable:", ""]
        lines += [f"- {m} {g} ({lib}): {e}" for m, g, lib, e in errors]
    with open(os.path.join(out_dir, "minibatch-capture.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(cases)), 4))
        series = [("eager_ms_gsparse", "gsparse eager"), ("captured_ms_gsparse", "gsparse captured"),
                  ("eager_ms_pyg", "PyG eager"), ("captured_ms_pyg", "PyG captured")]
        w = 0.2
        for j, (key, label) in enumerate(series):
            ax.bar([i + (j - 1.5) * w for i in range(len(cases))], [c.get(key, 0) for c in cases], w, label=label)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([f"{c['model']}\n{c['graph']}" + ("\n" + "/".join(map(str, c["fanouts"])) if "fanouts" in c
                                                                else "") for c in cases], fontsize=7)
        ax.set_ylabel("ms per step (median)")
        ax.set_title(f"Captured mini-batch steps, {meta['device']}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "minibatch-capture.png"), dpi=120)
    except Exception as e:  # noqa: BLE001 - the plot is optional where matplotlib is missing
        log(f"no plot: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mb.add_workload_arguments(ap, warmup=3)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--no-molecules", action="store_true")
    ap.add_argument("--models", default="sage,gat", help="block models (sage, gat)")
    ap.add_argument("--trace", action="store_true", help="log every timed step before it runs")
    ap.add_argument("--libs", default="pyg,gsparse",
                    help="libraries in capture order")
    ap.add_argument("--modes", default="eager,captured")
    ap.add_argument("--no-loss-check", action="store_true")
    ap.add_argument("--out-root", default="benchmarks/results")
    args = ap.parse_args()
    device, meta, slug = mb.run_meta("minibatch_capture.py", args)
    cases = []
    for spec in args.graph:
        gname, path = spec.split("=", 1)
        cases += block_cases(gname, path, mb.fanout_sets(gname), args, device)
    if not args.no_molecules:
        cases += molecule_cases(args, device)
    out_dir = os.path.join(args.out_root, f"{slug}-minibatch-capture")
    write_report(out_dir, meta, cases)
    log(f"wrote {out_dir}")


if __name__ == "__main__":
    main()
