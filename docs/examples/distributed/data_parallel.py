"""Data-parallel mini-batch GraphSAGE with gsparse on several GPUs (or CPU processes).

    torchrun --nproc-per-node 2 docs/examples/distributed/data_parallel.py       # one process per GPU
    python3 docs/examples/distributed/data_parallel.py --nproc 2 --cpu           # gloo, spawned here

Every process holds the whole graph and feature matrix, samples blocks on its device for its own
seeds (disjoint shards each epoch, its own random stream) and runs the model under
DistributedDataParallel, which averages the gradients. Features and labels are random (the point is
the plumbing): the loss falls as the model fits them.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import gsparse
import gsparse.distributed as gd
from launch import arguments, launch


class SAGE(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(gsparse.nn.SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, blocks):
        for i, (conv, block) in enumerate(zip(self.convs, blocks)):
            x = conv((x, x[:block.num_dst]), block)      # destinations are the first num_dst sources
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x


def main(args, device):
    rank, world = dist.get_rank(), dist.get_world_size()
    graph = gsparse.Graph.load(args.graph)                # every rank: the whole graph, its own copy
    n = graph.num_dst
    gen = torch.Generator().manual_seed(0)                # the same data on every rank
    x = torch.randn(n, 32, generator=gen).to(device)
    y = torch.randint(0, 7, (n,), generator=gen).to(device)
    train_idx = torch.randperm(n, generator=gen)[: n // 2]
    torch.manual_seed(0)
    model = DDP(SAGE([32, 64, 7]).to(device), device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = gd.DistributedNeighborLoader(graph, [10, 5], batch_size=args.batch, rank=rank, world_size=world,
                                          input_nodes=train_idx, seed=0, device=device)
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)                           # a new shuffle and new samples per epoch
        total, steps = 0.0, 0
        for batch in loader:
            opt.zero_grad()
            out = model(x[batch.input_nodes], batch.blocks)
            loss = F.cross_entropy(out, y[batch.seeds])
            loss.backward()                               # DDP averages the gradients over the ranks
            opt.step()
            total, steps = total + loss.item(), steps + 1
        mean = torch.tensor([total / max(steps, 1)], device=device)
        dist.all_reduce(mean)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {float(mean) / world:.4f} ({steps} steps on each of {world} ranks)")


if __name__ == "__main__":
    launch(main, arguments(__doc__.split("\n")[0],
                           lambda ap: ap.add_argument("--batch", type=int, default=128, help="seeds per rank and step")))
