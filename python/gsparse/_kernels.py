"""Plain (non-autograd) calls of the native kernels: operand checks, output allocation on the
operands' device, and the call on PyTorch's current stream. The autograd functions in spmm.py,
sddmm.py and softmax.py are built from these."""

import torch

from ._native import ShapeError, _C, launch_arg, tensor_arg
from ._tensor_graph import COO_SEGMENTS

SPMM_OPS = ("add", "sub", "mul", "div", "copy_lhs", "copy_rhs")
SDDMM_OPS = ("add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs")
REDUCES = ("sum", "mean", "max", "min")
TARGETS = ("u", "v", "e")
_ALIASES = {"copy_u": "copy_lhs", "copy_e": "copy_rhs"}
_TARGET_ALIASES = {"src": "u", "dst": "v", "edge": "e"}


def uses_lhs(op):
    return op != "copy_rhs"


def uses_rhs(op):
    return op != "copy_lhs"


def needs_grad(lhs, rhs):
    """Whether autograd records an operator on these operands (grad mode on, one requires grad)."""
    return torch.is_grad_enabled() and (getattr(lhs, "requires_grad", False) or getattr(rhs, "requires_grad", False))


def canonical_op(op, allowed, what):
    op = _ALIASES.get(op, op)
    if op not in allowed:
        raise ShapeError(f"unknown {what} op '{op}' (expected one of {', '.join(allowed)})")
    return op


def canonical_target(t, name):
    t = _TARGET_ALIASES.get(t, t)
    if t not in TARGETS:
        raise ShapeError(f"{name} must be 'u', 'v' or 'e', got '{t}'")
    return t


_FEATURE_DTYPES = (torch.float32, torch.float64)


def _operand(t, name, op):
    """t as a contiguous feature tensor with a leading row dimension (ShapeError otherwise)."""
    if t is None:
        raise ShapeError(f"op {op} needs {name}")
    if not isinstance(t, torch.Tensor):
        raise ShapeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in _FEATURE_DTYPES:
        raise ShapeError(f"{name} has dtype {t.dtype}; gsparse features are float32 or float64")
    if t.dim() < 1:
        raise ShapeError(f"{name} must have a leading node/edge dimension, got a 0-d tensor")
    return t.contiguous()


def _operands(op, lhs, rhs):
    """(lhs, rhs, device, dtype, output feature shape) of an operator call: the operands op uses,
    contiguous (None for the one it does not use), on one device and of one float dtype. Called
    on every kernel call, so it checks in a handful of attribute reads."""
    lhs = _operand(lhs, "lhs", op) if op != "copy_rhs" else None
    rhs = _operand(rhs, "rhs", op) if op != "copy_lhs" else None
    first = lhs if lhs is not None else rhs
    device, dtype = first.device, first.dtype
    if lhs is not None and rhs is not None:
        if rhs.device != device:
            raise ShapeError(f"lhs is on {device} but rhs is on {rhs.device}; all operands must be on one device")
        if rhs.dtype != dtype:
            raise ShapeError(f"lhs ({dtype}) and rhs ({rhs.dtype}) have different dtypes")
    lf = lhs.shape[1:] if lhs is not None else rhs.shape[1:]
    rf = rhs.shape[1:] if rhs is not None else lf
    return lhs, rhs, device, dtype, _out_feature_shape(op, lf, rf)


_OUT_FEATURES = {}


def _out_feature_shape(op, lf, rf):
    """The output feature shape of op on operands of feature shapes lf and rf (the native rule,
    remembered per shape pair: a step calls it with a handful of shapes again and again)."""
    key = (op, lf, rf)
    feat = _OUT_FEATURES.get(key)
    if feat is None:
        feat = _C.out_feature_shape(op, list(lf), list(rf))
        if len(_OUT_FEATURES) < 4096:
            _OUT_FEATURES[key] = feat
    return list(feat)


def _tuned(g, kind, op, a, b, lhs, rhs, dtype, device):
    """The graph's tuned schedule of this call (Graph.use_tuned), float32 only; else None."""
    if dtype != torch.float32 or not getattr(g, "_tuned", None):
        return None
    lf = list(lhs.shape[1:]) if lhs is not None else None
    rf = list(rhs.shape[1:]) if rhs is not None else None
    return g.tuned_schedule(kind, op, a, b, lf if lf is not None else rf, rf if rf is not None else lf, device)


def _check_graph_device(g, device):
    """A dynamic graph's arrays live on one device: the operands must be there too."""
    if g._t is not None and g._t.device != device:
        raise ShapeError(f"the graph is dynamic on {g._t.device} but the operands are on {device}; "
                         "build the graph from index tensors on the operands' device")


SEGMENTS = "spmm_segments"


def _sum_on_coo(view, op, reduce, lhs, rhs, out, device):
    """g-SpMM sum into out by nonzeros on a COO view (TensorGraph.coo_view)."""
    _C.gspmm_view(view, op, reduce, tensor_arg(lhs, "lhs"), tensor_arg(rhs, "rhs"), tensor_arg(out, "out"), None,
                  None, launch_arg(device), COO_SEGMENTS)


def spmm(g, op, reduce, lhs, rhs, schedule=None):
    """g-SpMM: (out, arg_u, arg_e); the arg tensors (int32) only for max / min, else None.
    schedule: a schedule point as text ("spmm_segments{run=32}": by nonzeros, sum and mean), or
    None for the default (a static graph's tuned point, if any)."""
    lhs, rhs, device, dtype, feat = _operands(op, lhs, rhs)
    _check_graph_device(g, device)
    shape = [g.num_dst] + feat
    out = torch.empty(shape, dtype=dtype, device=device)
    arg_u = arg_e = None
    if reduce in ("max", "min"):
        arg_u = torch.empty(shape, dtype=torch.int32, device=device)
        arg_e = torch.empty(shape, dtype=torch.int32, device=device)
    if g._t is not None:
        if g.num_edges == 0 and device.type == "cuda":
            # Nothing to gather: every node is empty (no kernel needed).
            out.zero_()
            if arg_u is not None:
                arg_u.fill_(-1)
                arg_e.fill_(-1)
            return out, arg_u, arg_e
        t = g._t
        if schedule is None and t.runs_on_coo(reduce):
            # A graph without its CSR: sum by nonzeros over the COO (the CSR stays unmade).
            _sum_on_coo(t.coo_view(), op, reduce, lhs, rhs, out, device)
            return out, arg_u, arg_e
        # By nonzeros, the kernel reads the COO (made on first use).
        view = t.sddmm_view() if schedule is not None and schedule.startswith(SEGMENTS) else t.view
        _C.gspmm_view(view, op, reduce, tensor_arg(lhs, "lhs"), tensor_arg(rhs, "rhs"), tensor_arg(out, "out"),
                      tensor_arg(arg_u, "arg_u"), tensor_arg(arg_e, "arg_e"), launch_arg(device), schedule)
        return out, arg_u, arg_e
    if schedule is None:
        schedule = _tuned(g, "spmm", op, reduce, "", lhs, rhs, dtype, device)
    _C.gspmm(g._g, op, reduce, tensor_arg(lhs, "lhs"), tensor_arg(rhs, "rhs"), tensor_arg(out, "out"),
             tensor_arg(arg_u, "arg_u"), tensor_arg(arg_e, "arg_e"), launch_arg(device), schedule)
    return out, arg_u, arg_e


def pushes(g):
    """Whether the backward passes of g run the transposed g-SpMM in push form (spmm_transposed)
    instead of g-SpMM on the reverse graph: dynamic graphs, which live for one step and would
    otherwise sort their edges to build the reverse graph, unless PyTorch is asked for
    deterministic algorithms (the push form adds with atomics, in a varying order on the GPU)."""
    return g._t is not None and not torch.are_deterministic_algorithms_enabled()


def spmm_transposed(g, op, reduce, lhs, rhs):
    """The transposed g-SpMM on a dynamic graph: out [num_src, ...], out[u] = sum over the edges
    e = (u -> v) of lhs[v] op rhs[e] (lhs divided by v's in-degree for reduce = mean); op is
    copy_lhs, copy_rhs, mul or div. g-SpMM sum on the reverse graph, without building it."""
    lhs, rhs, device, dtype, feat = _operands(op, lhs, rhs)
    _check_graph_device(g, device)
    out = torch.empty([g.num_src] + feat, dtype=dtype, device=device)
    if g.num_edges == 0 or g.num_dst == 0:
        return out.zero_()
    if g._t.runs_on_coo(reduce):
        # A graph without its CSR: g-SpMM sum by nonzeros over the reversed COO.
        _sum_on_coo(g._t.coo_view(reverse=True), op, reduce, lhs, rhs, out, device)
        return out
    _C.gspmm_transposed_view(g._t.view, op, reduce, tensor_arg(lhs, "lhs"), tensor_arg(rhs, "rhs"),
                             tensor_arg(out, "out"), launch_arg(device))
    return out


def sddmm(g, op, lhs, rhs, lhs_target, rhs_target):
    """g-SDDMM: num_edges rows in edge-id order."""
    lhs, rhs, device, dtype, feat = _operands(op, lhs, rhs)
    _check_graph_device(g, device)
    out = torch.empty([g.num_edges] + feat, dtype=dtype, device=device)
    if g._t is not None:
        if g.num_edges:
            _C.gsddmm_view(g._t.sddmm_view(), op, lhs_target, rhs_target, tensor_arg(lhs, "lhs"),
                           tensor_arg(rhs, "rhs"), tensor_arg(out, "out"), launch_arg(device))
        return out
    schedule = _tuned(g, "sddmm", op, lhs_target, rhs_target, lhs, rhs, dtype, device)
    _C.gsddmm(g._g, op, lhs_target, rhs_target, tensor_arg(lhs, "lhs"), tensor_arg(rhs, "rhs"),
              tensor_arg(out, "out"), launch_arg(device), schedule)
    return out


def reduce_to(grad, shape):
    """Sums grad [rows, *out_feat] over the feature dimensions in which an operand of shape
    [rows, *feat] was broadcast, giving the operand's shape."""
    shape = list(shape)
    out_feat, feat = list(grad.shape[1:]), shape[1:]
    if out_feat == feat:
        return grad
    padded = [1] * (len(out_feat) - len(feat)) + feat
    dims = [i + 1 for i, (o, f) in enumerate(zip(out_feat, padded)) if f == 1 and o != 1]
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape)


def expand_to(t, out_feat):
    """t [rows, *feat] viewed as [rows, *out_feat] (numpy broadcasting of the feature dims)."""
    feat = list(t.shape[1:])
    padded = [1] * (len(out_feat) - len(feat)) + feat
    return t.reshape([t.shape[0]] + padded).expand([t.shape[0]] + list(out_feat))


def gather_rows(g, x, target):
    """x indexed by target ('u', 'v' or 'e') per edge: [num_edges, *feat]."""
    if target == "e":
        return x
    return sddmm(g, "copy_lhs", x, None, target, target)


def scatter_rows(g, grad, target):
    """Per-edge grad [num_edges, *feat] summed into the rows of target ('u', 'v' or 'e')."""
    if target == "e":
        return grad
    if target == "u" and pushes(g):
        return spmm_transposed(g, "copy_rhs", "sum", None, grad)
    graph = g if target == "v" else g.reverse()
    return spmm(graph, "copy_rhs", "sum", None, grad)[0]


def align(a, b):
    """a [rows, *fa] and b [rows, *fb] as views of one broadcast feature shape (the rows are not
    broadcast: PyTorch alone would align the shorter shape's rows with a feature dimension)."""
    feat = list(torch.broadcast_shapes(tuple(a.shape[1:]), tuple(b.shape[1:])))
    return expand_to(a, feat), expand_to(b, feat)
