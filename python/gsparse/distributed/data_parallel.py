"""gsparse.distributed.data_parallel: seeds and samplers for data-parallel mini-batch training.

One process per GPU (or per CPU process with gloo), the model replicated under
torch.nn.parallel.DistributedDataParallel; every rank samples its own blocks with
gsparse.sampling from the whole graph (which every rank holds) and trains on its own seeds:

    loader = DistributedNeighborLoader(graph, [25, 10], batch_size=1024, input_nodes=train_idx,
                                       rank=rank, world_size=world, seed=0)
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for batch in loader:               # a gsparse.sampling.MiniBatch of this rank's seeds
            ...

Per epoch, all ranks draw the same permutation of input_nodes (a CPU generator seeded with
seed + epoch, so the same on every device) and rank r takes the r-th of world_size equal, disjoint
shards; the shards are padded by wrapping around (DistributedSampler's rule) or, with
drop_last=True, cut to a multiple of world_size, so every rank runs the same number of steps (DDP
needs that). Each rank's sampler has its own random stream, seeded from (seed, rank, epoch).
"""

import torch

from ..sampling import NeighborSampler


def shard_seeds(input_nodes, rank, world_size, epoch=0, seed=0, shuffle=True, drop_last=False):
    """This rank's shard of input_nodes for an epoch (see the module docstring); on input_nodes' device."""
    input_nodes = torch.as_tensor(input_nodes)
    rank, world_size = int(rank), int(world_size)
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is out of range for world_size {world_size}")
    n = input_nodes.numel()
    if shuffle:
        gen = torch.Generator().manual_seed(int(seed) + int(epoch))
        order = torch.randperm(n, generator=gen)
    else:
        order = torch.arange(n)
    if drop_last:
        per = n // world_size
        order = order[:per * world_size]
    else:
        per = -(-n // world_size)
        if per * world_size > n and n:
            order = torch.cat([order, order.repeat(-(-(per * world_size - n) // n))[:per * world_size - n]])
    return input_nodes[order[rank:per * world_size:world_size].to(input_nodes.device)]


def rank_seed(seed, rank, epoch=0):
    """A sampler seed for (seed, rank, epoch), different for every rank and epoch."""
    return (int(seed) * 1_000_003 + int(rank) * 7_919 + int(epoch) * 104_729 + 1) % (2**63 - 1)


class DistributedNeighborLoader:
    """gsparse.sampling.NeighborLoader for one rank of a data-parallel job: batches of this rank's
    seed shard (shard_seeds), sampled by a sampler seeded per rank and epoch. Call set_epoch(epoch)
    before each epoch, as with torch's DistributedSampler."""

    def __init__(self, graph, fanouts, batch_size, rank, world_size, input_nodes=None, shuffle=True, replace=False,
                 seed=0, device=None, drop_last=False):
        self.sampler = NeighborSampler(graph, fanouts, replace=replace, seed=rank_seed(seed, rank), device=device)
        dev = self.sampler.device
        self.input_nodes = (torch.arange(self.sampler.num_nodes, device=dev) if input_nodes is None
                            else torch.as_tensor(input_nodes).to(dev, torch.int64))
        if int(batch_size) <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.batch_size, self.rank, self.world_size = int(batch_size), int(rank), int(world_size)
        self.shuffle, self.drop_last, self.seed = bool(shuffle), bool(drop_last), int(seed)
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = int(epoch)
        self.sampler.manual_seed(rank_seed(self.seed, self.rank, self.epoch))

    def seeds(self):
        """This rank's seeds of the current epoch."""
        return shard_seeds(self.input_nodes, self.rank, self.world_size, self.epoch, self.seed, self.shuffle,
                           self.drop_last)

    def __len__(self):
        n = self.input_nodes.numel()
        per = n // self.world_size if self.drop_last else -(-n // self.world_size)
        return -(-per // self.batch_size)

    def __iter__(self):
        seeds = self.seeds()
        for i in range(len(self)):
            yield self.sampler.sample(seeds[i * self.batch_size:(i + 1) * self.batch_size])
