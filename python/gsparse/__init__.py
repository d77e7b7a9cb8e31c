"""gsparse: generalized sparse operators of graph neural networks (g-SpMM, g-SDDMM) for PyTorch.

    import torch, gsparse
    g = gsparse.Graph(edge_index, num_nodes=4)           # PyG-style [2, E], row 0 = source
    h = gsparse.gspmm(g, "copy_lhs", "sum", x, None)      # h[v] = sum of x[u] over edges u -> v
    s = gsparse.gsddmm(g, "dot", h, h, "u", "v")         # s[e] = <h[u], h[v]> for e = (u -> v)
    a = gsparse.edge_softmax(g, s)                        # softmax over the in-edges of each node

Every operator supports autograd. CPU tensors run the CPU kernels; CUDA tensors run the GPU
kernels on PyTorch's current stream, reading and writing the tensors in place (no copies).
Layers with PyG-compatible signatures are in gsparse.nn (GCNConv, SAGEConv, GATConv).
"""

import pkgutil as _pkgutil

# The native module gsparse._C is built into <build>/python/gsparse; with that folder's parent on
# sys.path next to this one, extend_path makes both one package.
__path__ = _pkgutil.extend_path(__path__, __name__)

from ._native import Error, FormatError, GraphError, KernelError, ScheduleError, ShapeError  # noqa: E402
from .graph import Graph  # noqa: E402
from .batch import batch_graphs  # noqa: E402
from .sddmm import gsddmm  # noqa: E402
from .softmax import edge_softmax  # noqa: E402
from .spmm import gspmm  # noqa: E402
from .plugins import load_plugin, user_op  # noqa: E402
from . import nn  # noqa: E402
from . import sampling  # noqa: E402
from . import capture  # noqa: E402
import torch.distributed as _dist  # noqa: E402

if _dist.is_available():  # several GPUs / processes (docs/distributed.md)
    from . import distributed  # noqa: E402
from ._native import _C as _native_module  # noqa: E402

# The persistent kernel cache (docs/minibatch.md): kernels of dynamic graphs compiled once per
# machine, loaded by later processes.
kernel_cache_dir = _native_module.kernel_cache_dir
set_kernel_cache_dir = _native_module.set_kernel_cache_dir
kernel_cache_stats = _native_module.kernel_cache_stats

__all__ = [
    "Graph", "batch_graphs", "sampling", "capture", "gspmm", "gsddmm", "edge_softmax", "nn", "load_plugin", "user_op",
    "Error", "GraphError", "FormatError", "ShapeError", "ScheduleError", "KernelError",
    "kernel_cache_dir", "set_kernel_cache_dir", "kernel_cache_stats",
]
