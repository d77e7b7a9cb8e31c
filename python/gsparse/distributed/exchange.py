"""gsparse.distributed.exchange: moving feature rows between ranks, and the halo exchange with
autograd.

`exchange_rows` is the one all-to-all of the package: rank r sends send_counts[q] rows of its
`send` tensor (grouped by destination rank, in rank order) to each rank q and receives
recv_counts[q] rows from each q, concatenated in rank order. It runs
torch.distributed.all_to_all_single with split sizes (NCCL; gloo on the CPU has it as well), and
falls back to pairwise isend / irecv on process groups without it (or with method="p2p").

`HaloPlan` is built once per partitioned graph, collectively: each rank tells every other rank
which of its rows it needs (the halo of its LocalPart) with two all-to-alls (counts, then ids);
afterwards each rank knows which local rows to send to whom. `halo_exchange(x_local, plan)` returns
this rank's halo rows; its backward is the transposed exchange: the halo rows' gradients travel back
to their owners and are summed into the owners' rows (torch.autograd.Function).

Every rank must make the same sequence of exchange calls (forward and backward): they are
collectives.
"""

import torch
import torch.distributed as dist

_A2A_UNSUPPORTED = set()   # backends found without all_to_all_single in this process


def comm_device(group=None):
    """The device collectives of `group` run on: the current CUDA device for NCCL, else the CPU."""
    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _p2p_exchange(out, send, send_counts, recv_counts, group):
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    s_off = [0]
    for c in send_counts:
        s_off.append(s_off[-1] + c)
    r_off = [0]
    for c in recv_counts:
        r_off.append(r_off[-1] + c)
    out[r_off[rank]:r_off[rank + 1]] = send[s_off[rank]:s_off[rank + 1]]
    reqs = []
    for q in range(world):
        if q == rank:
            continue
        peer = q if group is None else dist.distributed_c10d._get_global_rank(group, q)
        if send_counts[q]:
            reqs.append(dist.isend(send[s_off[q]:s_off[q + 1]].contiguous(), peer, group=group))
        if recv_counts[q]:
            reqs.append(dist.irecv(out[r_off[q]:r_off[q + 1]], peer, group=group))
    for r in reqs:
        r.wait()
    return out


def exchange_rows(send, send_counts, recv_counts, group=None, method="auto"):
    """All-to-all of rows (see the module docstring): returns a new tensor of sum(recv_counts)
    rows with send's trailing shape. method: "auto" (all_to_all_single where the backend has it),
    "a2a" or "p2p"."""
    send = send.contiguous()
    send_counts, recv_counts = [int(c) for c in send_counts], [int(c) for c in recv_counts]
    if send.shape[0] != sum(send_counts):
        raise ValueError(f"send has {send.shape[0]} rows, send_counts sum to {sum(send_counts)}")
    out = send.new_empty((sum(recv_counts),) + tuple(send.shape[1:]))
    backend = dist.get_backend(group)
    if method == "p2p" or (method == "auto" and backend in _A2A_UNSUPPORTED):
        return _p2p_exchange(out, send, send_counts, recv_counts, group)
    if any(d == 0 for d in send.shape[1:]):
        return out  # rows of no elements (the same on every rank): nothing to move
    try:
        dist.all_to_all_single(out, send, recv_counts, send_counts, group=group)
    except RuntimeError as e:
        # Every rank of the group fails the same way before communicating, so all fall back together.
        if method != "auto" or "does not support" not in str(e):
            raise
        _A2A_UNSUPPORTED.add(backend)
        return _p2p_exchange(out, send, send_counts, recv_counts, group)
    return out


class HaloPlan:
    """Who sends which rows to whom for one LocalPart (built collectively over `group`).

    recv_counts[q]   halo rows this rank receives from rank q (its LocalPart's halo_counts)
    send_counts[q]   rows this rank sends to rank q
    send_index       int64 local row ids to send, grouped by destination rank
    """

    def __init__(self, part, group=None, method="auto"):
        self.group, self.method = group, method
        world = dist.get_world_size(group)
        if world != part.num_parts:
            raise ValueError(f"the partition has {part.num_parts} parts but the process group {world} ranks")
        if dist.get_rank(group) != part.rank:
            raise ValueError(f"LocalPart of rank {part.rank} used on rank {dist.get_rank(group)}")
        dev = comm_device(group)
        self.recv_counts = [int(c) for c in part.halo_counts]
        counts = exchange_rows(torch.tensor(self.recv_counts, dtype=torch.int64, device=dev),
                               [1] * world, [1] * world, group, method)
        self.send_counts = [int(c) for c in counts.tolist()]
        wanted = exchange_rows(part.halo_nodes.to(dev), self.recv_counts, self.send_counts, group, method)
        self.send_index = (wanted - part.start).to("cpu")
        if self.send_index.numel() and (int(self.send_index.min()) < 0 or int(self.send_index.max()) >= part.num_local):
            raise ValueError("another rank asked for rows this rank does not own: the ranks' partitions differ")
        self._index = {}

    def index(self, device):
        key = str(device)
        if key not in self._index:
            self._index[key] = self.send_index.to(device)
        return self._index[key]

    @property
    def num_send(self):
        return sum(self.send_counts)

    @property
    def num_recv(self):
        return sum(self.recv_counts)


class _HaloExchange(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x_local, plan):
        ctx.plan = plan
        ctx.num_local = x_local.shape[0]
        send = x_local.index_select(0, plan.index(x_local.device))
        return exchange_rows(send, plan.send_counts, plan.recv_counts, plan.group, plan.method)

    @staticmethod
    def backward(ctx, grad_halo):
        plan = ctx.plan
        grad_send = exchange_rows(grad_halo.contiguous(), plan.recv_counts, plan.send_counts, plan.group, plan.method)
        grad = grad_send.new_zeros((ctx.num_local,) + tuple(grad_send.shape[1:]))
        grad.index_add_(0, plan.index(grad.device), grad_send)
        return grad, None


def halo_exchange(x_local, plan):
    """This rank's halo rows [plan.num_recv, ...] of the distributed tensor whose local rows are
    x_local; differentiable (the backward sends the halo gradients back to the owners)."""
    return _HaloExchange.apply(x_local, plan)
