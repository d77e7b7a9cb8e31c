"""Partitioned full-graph GCN with gsparse: the graph split by destination rows over several GPUs
(or CPU processes), each holding only its rows' features.

    torchrun --nproc-per-node 2 docs/examples/distributed/partitioned.py
    python3 docs/examples/distributed/partitioned.py --nproc 3 --cpu

Each rank keeps a contiguous range of rows balanced by in-edges (DistGraph); the layers exchange the
halo rows their edges read with all-to-alls and sum the parameter gradients with
allreduce_gradients. With --check, rank 0 also trains the same model on the whole graph in one
process and compares the losses, which agree to float rounding.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F

import gsparse
import gsparse.distributed as gd
from launch import arguments, launch


class GCN(torch.nn.Module):
    def __init__(self, conv, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(conv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, g):
        for i, conv in enumerate(self.convs):
            x = conv(x, g)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def train(model, x, y, mask, n_train, graph, epochs, distributed):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(epochs):
        opt.zero_grad()
        out = model(x, graph)
        # This rank's share of the global mean loss: the sum over its training rows / all training rows.
        loss = F.cross_entropy(out[mask], y[mask], reduction="sum") / n_train
        loss.backward()
        total = loss.detach().clone()
        if distributed:
            gd.allreduce_gradients(model)                 # parameters are replicated: sum their gradients
            dist.all_reduce(total)                        # the global loss
        opt.step()
        losses.append(total.item())
    return losses


def main(args, device):
    rank, world = dist.get_rank(), dist.get_world_size()
    graph = gsparse.Graph.load(args.graph)
    n = graph.num_dst
    dg = gd.DistGraph.from_global(graph)                  # collective: the partition and the halo plan
    print(f"rank {rank}: {dg}")
    gen = torch.Generator().manual_seed(0)
    x_all, y_all = torch.randn(n, 32, generator=gen), torch.randint(0, 7, (n,), generator=gen)
    mask_all = torch.rand(n, generator=gen) < 0.5
    n_train = int(mask_all.sum())
    x, y, mask = (t[dg.nodes].to(device) for t in (x_all, y_all, mask_all))   # only this rank's rows
    torch.manual_seed(0)
    model = GCN(gd.DistGCNConv, [32, 64, 7]).to(device)
    losses = train(model, x, y, mask, n_train, dg, args.epochs, True)
    if rank == 0:
        print("partitioned losses:", " ".join(f"{v:.6f}" for v in losses))
        if args.check:
            torch.manual_seed(0)
            single = GCN(gsparse.nn.GCNConv, [32, 64, 7]).to(device)
            ref = train(single, x_all.to(device), y_all.to(device), mask_all.to(device), n_train, graph,
                        args.epochs, False)
            print("one process losses: ", " ".join(f"{v:.6f}" for v in ref))
            worst = max(abs(a - b) for a, b in zip(losses, ref))
            print(f"largest difference {worst:.2e}")
            if worst > 1e-4:
                raise SystemExit("the partitioned losses differ from the single-process ones")


if __name__ == "__main__":
    launch(main, arguments(__doc__.split("\n")[0],
                           lambda ap: ap.add_argument("--check", action="store_true",
                                                      help="compare with one process on the whole graph")))
