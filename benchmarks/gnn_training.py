#!/usr/bin/env python3
"""Full-batch GNN training and inference: gsparse.nn layers against torch_geometric's own layers.

Models (2 layers, hidden 256): GCN, GraphSAGE (mean), GAT (4 heads x 64, then 1 head). Each is built
twice from the same model code, once with gsparse.nn.{GCNConv, SAGEConv, GATConv} on a gsparse.Graph
and once with torch_geometric.nn's layers, the latter given both input forms:
  pyg.edge_index  the [2, E] int64 edge index;
  pyg.csr         a torch.sparse_csr_tensor adjacency (adj_t: row = destination), PyG's fused
                  sparse-matrix path where the layer accepts one (GCNConv with cached=True for both).
Per graph x model x competitor: median training-epoch time (forward + loss + backward + Adam step),
median inference time (eval, no_grad), both with CUDA events after warm-up, and the peak of
PyTorch's allocator (torch.cuda.max_memory_allocated). gsparse's device copies of the graph's index
arrays are allocated by Halide's runtime, outside PyTorch's allocator: their size is reported
separately (graph_index_bytes: the device memory in use outside PyTorch's allocator after the case,
less what was in use before the first case; cumulative, so an upper bound for each case). Failures (out of memory, unsupported
input forms) are recorded with their message.

Accuracy parity on Cora (datasets/real/cora.mtx has structure only): node features are
Gaussian (seeded), labels are synthetic: 7 classes from a fixed random "teacher", the argmax of
A_hat^2 X W (A_hat = GCN normalization with self-loops), so that they depend on the graph; train /
val / test = 140 / 500 / 1000 random nodes. Both implementations start from the same weights (the
PyG model's, copied into the gsparse model), train 200 epochs with the same seed (Adam, lr 0.01,
weight decay 5e-4, dropout 0.5), and the final test accuracies are reported with the largest
difference of the initial logits.

Writes gnn.json, gnn.md and gnn.png into <out-root>/<date>-<device-slug>/.
"""

import argparse
import datetime as dt
import json
import os
import re
import sys
import traceback

import torch
import torch.nn.functional as F

import gsparse
from cuda_timing import time_cuda

TWINS = {"reddit": (602, 41), "ogbn-products": (100, 47)}  # (feature length, classes) of the datasets
# Other graphs (zoo members, files): --feat input features and --classes classes; a graph whose
# sources and destinations differ (bipartite) is skipped, as node classification needs one node set.


# --- Models ----------------------------------------------------------------------------------------

def conv_classes(lib):
    if lib == "gsparse":
        return gsparse.nn.GCNConv, gsparse.nn.SAGEConv, gsparse.nn.GATConv
    import torch_geometric.nn as pygnn
    return pygnn.GCNConv, pygnn.SAGEConv, pygnn.GATConv


class Net(torch.nn.Module):
    def __init__(self, kind, lib, in_dim, hidden, classes, dropout=0.5):
        super().__init__()
        GCN, SAGE, GAT = conv_classes(lib)
        self.dropout = dropout
        if kind == "gcn":
            extra = {"cached": True}
            self.conv1, self.conv2 = GCN(in_dim, hidden, **extra), GCN(hidden, classes, **extra)
        elif kind == "sage":
            self.conv1, self.conv2 = SAGE(in_dim, hidden), SAGE(hidden, classes)
        else:
            heads = 4
            self.conv1 = GAT(in_dim, hidden // heads, heads=heads)
            self.conv2 = GAT(hidden, classes, heads=1)

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(self.conv1(x, adj))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, adj)


def copy_weights(src, dst):
    """Copies a PyG model's parameters into the gsparse model of the same kind."""
    s = src.state_dict()
    out = {}
    for name in dst.state_dict():
        alt = [name, name.replace(".lin.", ".lin_src."), name.replace(".lin.weight", ".lin.lin.weight")]
        key = next((a for a in alt if a in s), None)
        if key is None:
            raise KeyError(f"no PyG parameter for {name} (PyG has {sorted(s)})")
        out[name] = s[key].reshape(dst.state_dict()[name].shape)
    dst.load_state_dict(out)


# --- Inputs ---------------------------------------------------------------------------------------

def adjacency(g, form, device):
    if form == "gsparse":
        return g
    if form == "pyg.edge_index":
        return g.edge_index(device)
    row_ptr, col_idx, _ = g.csr(device)
    vals = torch.ones(col_idx.numel(), device=device)
    return torch.sparse_csr_tensor(row_ptr.to(torch.int64), col_idx.to(torch.int64), vals, (g.num_dst, g.num_src))


def outside_torch_bytes():
    """Device memory in use outside PyTorch's allocator (gsparse's graph index copies and kernel
    images, allocated by Halide's runtime): the driver's used memory less PyTorch's reserved pool."""
    free, total = torch.cuda.mem_get_info()
    return total - free - torch.cuda.memory_reserved()


def is_oom(err):
    return isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower()


# --- Timing ---------------------------------------------------------------------------------------

def bench_case(kind, form, g, x, y, classes, args, outside_torch_base):
    device = x.device
    lib = "gsparse" if form == "gsparse" else "pyg"
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    rec = {"model": kind, "competitor": form}
    try:
        torch.manual_seed(args.seed)
        model = Net(kind, lib, x.shape[1], args.hidden, classes).to(device)
        adj = adjacency(g, form, device)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

        def epoch():
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model(x, adj), y)
            loss.backward()
            opt.step()

        def infer():
            model.eval()
            with torch.no_grad():
                model(x, adj)

        rec["train_ms"], rec["train_runs_ms"] = time_cuda(epoch, args.warmup, args.runs)
        rec["infer_ms"], rec["infer_runs_ms"] = time_cuda(infer, args.warmup, args.runs)
        rec["peak_torch_bytes"] = torch.cuda.max_memory_allocated()
        if form == "gsparse":
            # Measured, cumulative over the run so far: the graph's device copies stay cached in the
            # native graph, so a later case may find them already allocated by an earlier one.
            rec["graph_index_bytes"] = max(0, outside_torch_bytes() - outside_torch_base)
    except Exception as err:  # recorded, the other cases go on
        rec["error"] = "out of memory" if is_oom(err) else f"{type(err).__name__}: {str(err)[:300]}"
        if not is_oom(err):
            traceback.print_exc()
    finally:
        model = adj = opt = None
        torch.cuda.empty_cache()
    return rec


# --- Cora parity ----------------------------------------------------------------------------------

def cora_task(path, device, seed):
    g = gsparse.Graph.load(path)
    gen = torch.Generator().manual_seed(seed)
    n, feat, classes = g.num_nodes, 1433, 7
    x = torch.randn(n, feat, generator=gen)
    teacher = torch.randn(feat, classes, generator=gen)
    gl = g.with_self_loops()
    dinv = gl.in_degrees().double().pow(-0.5).unsqueeze(-1)
    h = x.double() @ teacher.double()
    for _ in range(2):
        h = dinv * gsparse.gspmm(gl, "copy_lhs", "sum", dinv * h)
    y = h.argmax(1)
    perm = torch.randperm(n, generator=gen)
    split = {"train": perm[:140], "val": perm[140:640], "test": perm[640:1640]}
    return g, x.to(device), y.to(device), {k: v.to(device) for k, v in split.items()}, classes


def cora_parity(kind, task, args):
    g, x, y, split, classes = task
    device = x.device
    rec = {"model": kind}
    try:
        torch.manual_seed(args.seed)
        pyg = Net(kind, "pyg", x.shape[1], 64, classes).to(device)
        ours = Net(kind, "gsparse", x.shape[1], 64, classes).to(device)
        copy_weights(pyg, ours)
        pyg.eval(), ours.eval()
        with torch.no_grad():
            rec["initial_logit_max_abs_diff"] = float((pyg(x, g.edge_index(device)) - ours(x, g)).abs().max())
        for name, model, adj in (("pyg", pyg, g.edge_index(device)), ("gsparse", ours, g)):
            torch.manual_seed(args.seed)
            opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
            for _ in range(args.cora_epochs):
                model.train()
                opt.zero_grad()
                F.cross_entropy(model(x, adj)[split["train"]], y[split["train"]]).backward()
                opt.step()
            model.eval()
            with torch.no_grad():
                pred = model(x, adj).argmax(1)
            rec[f"{name}_test_acc"] = float((pred[split["test"]] == y[split["test"]]).float().mean())
            rec[f"{name}_val_acc"] = float((pred[split["val"]] == y[split["val"]]).float().mean())
    except Exception as err:
        rec["error"] = f"{type(err).__name__}: {str(err)[:300]}"
        traceback.print_exc()
    return rec


# --- Report ---------------------------------------------------------------------------------------

def fmt(v, unit=""):
    return "–" if v is None else f"{v:.2f}{unit}"


def write_report(results, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gnn.json"), "w") as f:
        json.dump(results, f, indent=1)
    md = [f"# Full-batch GNN training: gsparse.nn vs PyG ({results['metadata']['device']})", "",
          f"{results['metadata']['date']}, torch {results['metadata']['torch']}, "
          f"torch_geometric {results['metadata']['torch_geometric']}, hidden {results['metadata']['hidden']}, "
          f"median of {results['metadata']['runs']} runs after {results['metadata']['warmup']} warm-up runs. "
          "Peak memory: PyTorch's allocator; in parentheses, gsparse's device memory outside it (graph index copies "
          "and kernels, allocated by Halide's runtime), measured after the case and cumulative over the graph's cases.", "",
          "| graph | model | competitor | train epoch (ms) | inference (ms) | peak memory (GiB) | note |",
          "|---|---|---|---|---|---|---|"]
    for r in results["timing"]:
        mem = r.get("peak_torch_bytes")
        mem_s = "–" if mem is None else f"{mem / 2**30:.2f}"
        if r.get("graph_index_bytes"):
            mem_s += f" (+{r['graph_index_bytes'] / 2**30:.2f})"
        md.append(f"| {r['graph']} | {r['model']} | {r['competitor']} | {fmt(r.get('train_ms'))} | "
                  f"{fmt(r.get('infer_ms'))} | {mem_s} | {r.get('error', '')} |")
    md += ["", "## Accuracy parity on Cora (synthetic labels, see gnn_training.py)", "",
           "| model | PyG test acc | gsparse test acc | initial logits max abs diff | note |", "|---|---|---|---|---|"]
    for r in results["cora"]:
        md.append(f"| {r['model']} | {fmt(r.get('pyg_test_acc'))} | {fmt(r.get('gsparse_test_acc'))} | "
                  f"{r.get('initial_logit_max_abs_diff', '–')} | {r.get('error', '')} |")
    md += ["", "Cora has no labels in datasets/real: features are Gaussian and the 7 labels come from a "
           "fixed random teacher (argmax of A_hat^2 X W), so accuracies measure parity between the two "
           "implementations, not the Cora benchmark."]
    with open(os.path.join(out_dir, "gnn.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ok = [r for r in results["timing"] if "train_ms" in r]
        cases = sorted({(r["graph"], r["model"]) for r in ok})
        comps = sorted({r["competitor"] for r in ok})
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, key, title in ((axes[0], "train_ms", "training epoch"), (axes[1], "infer_ms", "inference")):
            width = 0.8 / max(len(comps), 1)
            for i, c in enumerate(comps):
                vals = [next((r[key] for r in ok if (r["graph"], r["model"]) == case and r["competitor"] == c),
                             float("nan")) for case in cases]
                ax.bar([j + i * width for j in range(len(cases))], vals, width, label=c)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(cases))])
            ax.set_xticklabels([f"{g}\n{m}" for g, m in cases], fontsize=8)
            ax.set_ylabel("ms (log)")
            ax.set_yscale("log")
            ax.set_title(title)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "gnn.png"), dpi=120)
    except ImportError:
        with open(os.path.join(out_dir, "gnn.md"), "a") as f:
            f.write("\n(no plot: matplotlib is not installed)\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", action="append", default=[], help="NAME=PATH of a graph (.gcsr): a twin (NAME in "
                    + ", ".join(TWINS) + ": its dataset's feature length and classes) or any other graph "
                    "(--feat, --classes)")
    ap.add_argument("--feat", type=int, default=128, help="input features of graphs that are not twins")
    ap.add_argument("--classes", type=int, default=16, help="classes of graphs that are not twins")
    ap.add_argument("--cora", default=None, help="cora.mtx [datasets/real/cora.mtx]")
    ap.add_argument("--models", default="gcn,sage,gat")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cora-epochs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-root", default="benchmarks/results")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gnn_training.py needs a CUDA device")
    import torch_geometric
    device = torch.device("cuda")
    name = torch.cuda.get_device_name()
    results = {"metadata": {"device": name, "date": dt.date.today().isoformat(), "torch": torch.__version__,
                            "torch_geometric": torch_geometric.__version__, "hidden": args.hidden,
                            "runs": args.runs, "warmup": args.warmup, "seed": args.seed},
               "timing": [], "cora": []}
    models = args.models.split(",")
    for spec in args.graph:
        gname, path = spec.split("=", 1)
        feat, classes = TWINS.get(gname, (args.feat, args.classes))
        print(f"loading {gname} from {path}", flush=True)
        g = gsparse.Graph.load(path)
        if g.num_src != g.num_dst:
            print(f"{gname}: {g.num_src} sources and {g.num_dst} destinations; skipped (one node set needed)", flush=True)
            results["timing"].append({"graph": gname, "model": "-", "competitor": "-", "nodes": g.num_dst,
                                      "edges": g.num_edges, "error": "bipartite graph: skipped"})
            continue
        gen = torch.Generator().manual_seed(args.seed)
        x = torch.randn(g.num_nodes, feat, generator=gen).to(device)
        y = torch.randint(0, classes, (g.num_nodes,), generator=gen).to(device)
        torch.cuda.synchronize()
        outside_torch_base = outside_torch_bytes()
        for kind in models:
            for form in ("gsparse", "pyg.csr", "pyg.edge_index"):
                rec = bench_case(kind, form, g, x, y, classes, args, outside_torch_base)
                rec["graph"] = gname
                rec.update(nodes=g.num_nodes, edges=g.num_edges)
                print(json.dumps({k: v for k, v in rec.items() if not k.endswith("runs_ms")}), flush=True)
                results["timing"].append(rec)
        del x, y, g
        torch.cuda.empty_cache()
    cora = args.cora or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "datasets", "real", "cora.mtx")
    task = cora_task(cora, device, args.seed)
    for kind in models:
        rec = cora_parity(kind, task, args)
        print(json.dumps(rec), flush=True)
        results["cora"].append(rec)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    out_dir = os.path.join(args.out_root, f"{results['metadata']['date']}-{slug}")
    write_report(results, out_dir)
    print(f"report written to {out_dir}")


if __name__ == "__main__":
    main()
