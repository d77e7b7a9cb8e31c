"""gsparse.distributed: training on several GPUs (or CPU processes) with torch.distributed.

Two ways (docs/distributed.md says when to use which):

data-parallel mini-batch training   the model replicated under DistributedDataParallel, every rank
    sampling blocks for its own seeds from the whole graph: DistributedNeighborLoader, shard_seeds.
partitioned full-graph training     the graph split by destination rows, every rank holding its
    rows' features; the halo rows a rank's edges read are exchanged with all-to-alls (backward:
    the transpose), and each rank runs gsparse's kernels on its part: DistGraph, the Dist* layers,
    allreduce_gradients; partitioning and exchange underneath (balanced_bounds, LocalPart,
    locality_order, relabel_csr, HaloPlan, halo_exchange, exchange_rows).

Nothing here starts processes or process groups: use torchrun (or torch.multiprocessing) and
torch.distributed.init_process_group("nccl" on GPUs, "gloo" on CPUs) first.
"""

from .data_parallel import DistributedNeighborLoader, rank_seed, shard_seeds
from .dist_graph import DistGraph
from .exchange import HaloPlan, comm_device, exchange_rows, halo_exchange
from .layers import DistGATConv, DistGCNConv, DistGINConv, DistSAGEConv, allreduce_gradients
from .partition import LocalPart, balanced_bounds, locality_order, owner_of, relabel_csr

__all__ = [
    "DistributedNeighborLoader", "shard_seeds", "rank_seed",
    "DistGraph", "DistGCNConv", "DistSAGEConv", "DistGINConv", "DistGATConv", "allreduce_gradients",
    "HaloPlan", "halo_exchange", "exchange_rows", "comm_device",
    "LocalPart", "balanced_bounds", "owner_of", "locality_order", "relabel_csr",
]
