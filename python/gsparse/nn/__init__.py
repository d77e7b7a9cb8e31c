"""GNN layers on gsparse's operators, with the constructor and forward signatures of PyG's layers
of the same names: GCNConv, SAGEConv (mean, max, sum, min aggregation), GATConv (multi-head), GINConv, and the
readouts global_add_pool / global_mean_pool / global_max_pool.
Their `edge_index` argument is a gsparse.Graph or a PyG-style [2, E] edge index (turned into a
Graph once and reused while the same tensor is passed)."""

from .gat_conv import GATConv
from .gcn_conv import GCNConv
from .gin_conv import GINConv
from .pool import global_add_pool, global_max_pool, global_mean_pool
from .sage_conv import SAGEConv

__all__ = ["GCNConv", "SAGEConv", "GATConv", "GINConv", "global_add_pool", "global_mean_pool", "global_max_pool"]
