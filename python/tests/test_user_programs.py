"""User programs from Python (gsparse.load_plugin, gsparse.user_op) with the example plugin of
docs/examples/user_plugin (built by CMake; its path comes in GSPARSE_EXAMPLE_PLUGIN, which the
python.cpu test sets): results against PyTorch on a graph with empty rows, duplicate edges and
self-loops, a user schedule, gradients through a user-given backward, per-edge programs, GAT's
attention fused into one user program (docs/examples/fused_gat.py) against GATConv, and bad input."""

import importlib.util
import os
import re

import pytest
import torch

import gsparse

PLUGIN = os.environ.get("GSPARSE_EXAMPLE_PLUGIN")
pytestmark = pytest.mark.skipif(not PLUGIN, reason="GSPARSE_EXAMPLE_PLUGIN is not set (ctest python.cpu sets it)")


@pytest.fixture(scope="module")
def plugin():
    return gsparse.load_plugin(PLUGIN)


def graph(dynamic_on=None):
    """(graph, edge_index): a static graph, or with dynamic_on a dynamic one on that device."""
    gen = torch.Generator().manual_seed(4)
    n, E = 60, 400
    src = torch.randint(0, n, (E,), generator=gen)
    dst = torch.randint(0, n - 5, (E,), generator=gen)  # the last rows are empty
    src[:3] = dst[:3]  # self-loops
    src[3:6], dst[3:6] = src[6:9].clone(), dst[6:9].clone()  # duplicate edges
    ei = torch.stack([src, dst])
    if dynamic_on is not None:
        return gsparse.Graph(ei.to(dynamic_on), num_nodes=n, dynamic=True), ei
    return gsparse.Graph(ei, num_nodes=n), ei


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def weighted(ei, x, w, reduce):
    ei = ei.to(x.device)
    msg = x[ei[0]] * w
    out = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype, device=x.device)
    if reduce == "sum":
        return out.index_add(0, ei[1], msg)
    return out.scatter_reduce(0, ei[1].unsqueeze(1).expand_as(msg), msg, "amax", include_self=False)


@pytest.mark.parametrize("device", DEVICES)
def test_programs_match_pytorch(plugin, device):
    assert {"weighted_max", "weighted_sum"} <= set(plugin.programs) and "row_tasks" in plugin.schedules
    g, ei = graph()
    x = torch.randn(g.num_src, 8, dtype=torch.float32, device=device)
    w = torch.rand(g.num_edges, 1, device=device) + 0.5
    for name, reduce in (("weighted_max", "max"), ("weighted_sum", "sum")):
        prog = plugin.program(name, features=8, device=device)
        assert prog.operand_names == ["x", "w"] and prog.device == device
        torch.testing.assert_close(prog(g, x=x, w=w), weighted(ei, x, w, reduce))
    if device == "cpu":
        tasks = plugin.program("weighted_max", 8, schedule="row_tasks", point={"rows": 4, "lanes": 4})
        assert tasks.schedule.startswith("row_tasks{") and "rows=4" in tasks.schedule
        torch.testing.assert_close(tasks(g, x=x, w=w), weighted(ei, x, w, "max"))
    else:  # the plugin's own schedule is a CPU schedule: named, not compiled
        with pytest.raises(gsparse.ScheduleError, match="row_tasks is a CPU schedule"):
            plugin.program("weighted_max", 8, device=device, schedule="row_tasks", point={"rows": 4, "lanes": 4})
    # compiled once per argument set
    assert plugin.program("weighted_max", 8, device=device) is plugin.program("weighted_max", 8, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_programs_run_on_dynamic_graphs(plugin, device):
    # A graph built on the operands' device (as mini-batch blocks are): its arrays are read where
    # they are, edge ids in the given order (unsorted edges) or as positions (sorted ones).
    _, ei = graph()
    x = torch.randn(60, 8, device=device)
    w = torch.rand(ei.shape[1], 1, device=device) + 0.5
    order = torch.argsort(ei[1], stable=True)
    for edges, weights in ((ei, w), (ei[:, order], w[order.to(device)])):
        g = gsparse.Graph(edges.to(device), num_nodes=60, dynamic=True)
        assert g.is_dynamic
        for name, reduce in (("weighted_max", "max"), ("weighted_sum", "sum")):
            got = plugin.program(name, 8, device=device)(g, x=x, w=weights)
            torch.testing.assert_close(got, weighted(edges, x, weights, reduce))
    # and with autograd through a given backward, on the dynamic graph
    g = gsparse.Graph(ei.to(device), num_nodes=60, dynamic=True)
    f = gsparse.user_op(plugin.program("weighted_sum", 8, device=device),
                        lambda g, grad, x, w: {"x": gsparse.gspmm(g.reverse(), "mul", "sum", grad, w)})
    xg = x.clone().requires_grad_()
    (dx,) = torch.autograd.grad(f(g, x=xg, w=w).sum(), (xg,))
    torch.testing.assert_close(dx, torch.autograd.grad(weighted(ei, xg, w, "sum").sum(), (xg,))[0])


@pytest.mark.parametrize("device", DEVICES)
def test_rows_in_order_of_in_degree(plugin, device):
    # The default schedule's balanced_rows point: the rows run longest first (the Graph's
    # balancedIdx; a dynamic graph's row order sorted on its device on first use), the results land
    # in the graph's row order, on both CUDA forms (threads over rows, lanes of nonzeros).
    _, ei = graph()
    x = torch.randn(60, 8, device=device)
    w = torch.rand(ei.shape[1], 1, device=device) + 0.5
    points = [{"balanced_rows": 1}] + ([{"balanced_rows": 1, "nnz_lanes": 1}] if device == "cuda" else [])
    for g in (graph()[0], gsparse.Graph(ei.to(device), num_nodes=60, dynamic=True)):
        for point in points:
            for name, reduce in (("weighted_max", "max"), ("weighted_sum", "sum")):
                prog = plugin.program(name, 8, device=device, point=point)
                assert "balanced_rows=1" in prog.schedule and "balanced_rows=1" in prog.schedule_on(g)
                torch.testing.assert_close(prog(g, x=x, w=w), weighted(ei, x, w, reduce))


@pytest.mark.parametrize("device", DEVICES)
def test_rows_split_into_segments(plugin, device):
    # The default schedule's row_segments point: every row cut into segments of at most 256
    # neighbours across the graph, merged per row, on a graph with a row of 300 in-edges; a graph
    # whose rows all fit in one segment and a dynamic graph (a view, without a segment table) run
    # whole rows.
    torch.manual_seed(3)
    src = torch.cat([torch.randint(0, 60, (300,)), torch.randint(0, 60, (400,))])
    dst = torch.cat([torch.full((300,), 7), torch.randint(0, 60, (400,))])
    ei = torch.stack([src, dst])
    x = torch.randn(60, 8, device=device)
    w = torch.rand(ei.shape[1], 1, device=device) + 0.5
    point = {"row_segments": 256} if device == "cpu" else {"row_segments": 256, "nnz_lanes": 1}
    whole = "row_segments=0" if device == "cpu" else "row_segments=-1"
    for name, reduce in (("weighted_max", "max"), ("weighted_sum", "sum")):
        prog = plugin.program(name, 8, device=device, point=point)
        g = gsparse.Graph(ei, num_nodes=60)
        assert "row_segments=256" in prog.schedule_on(g)
        torch.testing.assert_close(prog(g, x=x, w=w), weighted(ei, x, w, reduce))
        short = ei[:, 300:]
        g_short = gsparse.Graph(short, num_nodes=60)
        assert whole in prog.schedule_on(g_short)
        torch.testing.assert_close(prog(g_short, x=x, w=w[300:]), weighted(short, x, w[300:], reduce))
        dyn = gsparse.Graph(ei.to(device), num_nodes=60, dynamic=True)
        assert whole in prog.schedule_on(dyn)
        torch.testing.assert_close(prog(dyn, x=x, w=w), weighted(ei, x, w, reduce))


@pytest.mark.parametrize("device", DEVICES)
def test_default_point_by_the_graphs_longest_row(plugin, device):
    # On CUDA the default point runs a thread per row where every row is short (the Graph knows its
    # longest row); a dynamic graph from an edge_index does not know it and keeps lanes of nonzeros.
    g, ei = graph()
    x = torch.randn(60, 8, device=device)
    w = torch.rand(ei.shape[1], 1, device=device) + 0.5
    prog = plugin.program("weighted_sum", 8, device=device)
    dyn = gsparse.Graph(ei.to(device), num_nodes=60, dynamic=True)
    assert "nnz_lanes=0" in prog.schedule and prog.schedule_on(dyn) == prog.schedule
    if device == "cuda":
        assert "nnz_lanes=1" in prog.schedule_on(g)
    else:  # one form on the CPU
        assert prog.schedule_on(g) == prog.schedule
    for graph_ in (g, dyn):
        torch.testing.assert_close(prog(graph_, x=x, w=w), weighted(ei, x, w, "sum"))
    with pytest.raises(gsparse.ShapeError, match="gsparse.Graph"):
        prog.schedule_on(ei)


@pytest.mark.parametrize("device", DEVICES)
def test_user_op_gradients_through_a_given_backward(plugin, device):
    g, ei = graph()
    agg = plugin.program("weighted_sum", features=5, device=device)

    def backward(g, grad, x, w):
        return {"x": gsparse.gspmm(g.reverse(), "mul", "sum", grad, w),
                "w": gsparse.gsddmm(g, "dot", x, grad, "u", "v")}

    f = gsparse.user_op(agg, backward)
    x = torch.randn(g.num_src, 5, dtype=torch.float32, device=device, requires_grad=True)
    w = (torch.rand(g.num_edges, 1, device=device) + 0.5).requires_grad_()
    out = f(g, x=x, w=w)
    ref = weighted(ei, x, w, "sum")
    torch.testing.assert_close(out, ref)
    up = torch.randn_like(out)
    got = torch.autograd.grad(out, (x, w), up)
    want = torch.autograd.grad(ref, (x, w), up)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # Only x asks for a gradient: w gets none.
    out = f(g, x=x, w=w.detach())
    (dx,) = torch.autograd.grad(out.sum(), (x,))
    torch.testing.assert_close(dx, torch.autograd.grad(weighted(ei, x, w.detach(), "sum").sum(), (x,))[0])


def gated_mean(ei, x, a, b, w):
    """out[v] = mean over in-edges of sigmoid(a[u] + b[v]) * x[u] * w[e] (the plugin's gated_mean)."""
    ei = ei.to(x.device)
    msg = torch.sigmoid(a[ei[0]] + b[ei[1]]) * x[ei[0]] * w
    out = torch.zeros(b.shape[0], x.shape[1], dtype=x.dtype, device=x.device).index_add(0, ei[1], msg)
    deg = torch.zeros(b.shape[0], dtype=x.dtype, device=x.device).index_add(0, ei[1], torch.ones_like(w[:, 0]))
    return out / deg.clamp(min=1).unsqueeze(1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_user_op_derives_the_backward_from_the_message(plugin, device, dynamic):
    # No backward given: every operand's gradient is a user program derived from the message
    # (operands at the source on the reverse graph, at the destination and the edge on the graph,
    # broadcast ones summed over the features; the mean's 1 / degree as a scale).
    g, ei = graph(device if dynamic else None)
    F = 6
    f = gsparse.user_op(plugin.program("gated_mean", features=F, device=device))
    gen = torch.Generator().manual_seed(7)
    ops = {"x": torch.randn(g.num_src, F, generator=gen), "a": torch.randn(g.num_src, 1, generator=gen),
           "b": torch.randn(g.num_dst, 1, generator=gen), "w": torch.rand(g.num_edges, 1, generator=gen) + 0.5}
    ops = {k: v.to(device).requires_grad_() for k, v in ops.items()}
    out = f(g, **ops)
    ref = gated_mean(ei, ops["x"], ops["a"], ops["b"], ops["w"])
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    up = torch.randn(out.shape, generator=gen).to(device)
    names = ("x", "a", "b", "w")
    got = torch.autograd.grad(out, [ops[n] for n in names], up)
    want = torch.autograd.grad(ref, [ops[n] for n in names], up)
    for n, a, b in zip(names, got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m, n=n: f"gradient of {n}: {m}")
    # The weighted sum: the derived backward matches the one the test above gives by hand.
    agg = plugin.program("weighted_sum", features=F, device=device)
    x, w = ops["x"], ops["w"]
    dx, dw = torch.autograd.grad(gsparse.user_op(agg)(g, x=x, w=w), (x, w), up)
    rx, rw = torch.autograd.grad(weighted(ei, x, w, "sum"), (x, w), up)
    torch.testing.assert_close(dx, rx, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(dw, rw, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_operand_of_one_column_a_head(plugin, device, dynamic):
    # head_weighted_sum: x[u, f] * a[e, f / 4], a [num_edges, 4] (dsl::Columns, one weight an edge and
    # head of 4 features): PyTorch's values, the shape it asks for, and the derived backward (a's
    # gradient summed over each head's features) against autograd.
    g, ei = graph(device if dynamic else None)
    F, H = 16, 4
    prog = plugin.program("head_weighted_sum", features=F, device=device)
    assert prog.operands == [("x", "source", False, 0), ("a", "edge", False, 4)]
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(g.num_src, F, generator=gen).to(device).requires_grad_()
    a = torch.randn(g.num_edges, H, generator=gen).to(device).requires_grad_()
    eiv = ei.to(device)
    ref = torch.zeros(g.num_dst, F, device=device).index_add(
        0, eiv[1], (x[eiv[0]].view(-1, H, F // H) * a.unsqueeze(-1)).reshape(-1, F))
    out = gsparse.user_op(prog)(g, x=x, a=a)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    up = torch.randn(out.shape, generator=gen).to(device)
    got, want = torch.autograd.grad(out, (x, a), up), torch.autograd.grad(ref, (x, a), up)
    for n, u, v in zip("xa", got, want):
        torch.testing.assert_close(u, v, rtol=1e-4, atol=1e-5, msg=lambda m, n=n: f"gradient of {n}: {m}")
    with pytest.raises(gsparse.ShapeError, match=r"operand a of head_weighted_sum is read at the edge: shape \[400, 4\]"):
        prog(g, x=x.detach(), a=torch.zeros(g.num_edges, F, device=device))
    # F = 20 would read a fifth column of a's 4.
    with pytest.raises(gsparse.ShapeError, match="of 4 columns is read at column 4 for feature 16"):
        plugin.program("head_weighted_sum", features=20, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_builtin_operators_as_user_programs(plugin, device):
    # Plugin.builtin_program: gsparse.gspmm's operators through the public DSL (dsl/builtin_programs.h),
    # under the default user schedule and the plugin's staged_tiles, against the built-in operators.
    g, _ = graph()
    gen = torch.Generator().manual_seed(13)
    for op, reduce, lf, rf in [("copy_lhs", "sum", [8], []), ("mul", "mean", [8], [1]), ("mul", "sum", [4, 3], [4, 1]),
                               ("add", "max", [6], [6]), ("copy_rhs", "min", [], [2, 3])]:
        lhs = torch.randn([g.num_src] + lf, generator=gen).to(device) if lf else None
        rhs = torch.rand([g.num_edges] + rf, generator=gen).to(device) + 0.5 if rf else None
        want = gsparse.gspmm(g, op, reduce, lhs, rhs).reshape(g.num_dst, -1)
        ops = {}
        if lhs is not None and op != "copy_rhs":
            ops["lhs"] = lhs.reshape(g.num_src, -1)
        if rhs is not None and op != "copy_lhs":
            ops["rhs"] = rhs.reshape(g.num_edges, -1)
        for schedule in (None, "staged_tiles"):
            prog = plugin.builtin_program(op, reduce, lf, rf, device=device, schedule=schedule)
            assert prog.name == ("copy_u" if op == "copy_lhs" else "copy_e" if op == "copy_rhs" else f"u_{op}_e") + \
                f"_{reduce}"
            torch.testing.assert_close(prog(g, **ops), want, rtol=1e-5, atol=1e-5,
                                       msg=lambda m, op=op, schedule=schedule: f"{op} {reduce} {schedule}: {m}")
    heads = plugin.builtin_program("mul", "sum", [4, 3], [4, 1], device=device)
    assert heads.operands == [("lhs", "source", False, 0), ("rhs", "edge", False, 4)]
    with pytest.raises(gsparse.ShapeError, match="broadcast"):
        plugin.builtin_program("mul", "sum", [4, 3], [2, 1], device=device)


def test_builtin_schedule_through_the_public_api(plugin):
    # builtin_gpu_spmm (dsl/builtin_schedules.h): the built-in CUDA schedule written with the public
    # directives, at the very point the built-in operator takes on the graph (CUDA code is compiled
    # without a GPU); any plugin resolves it by name.
    g, _ = graph()
    for F in (1, 32):
        text = g.default_schedule("spmm", "copy_lhs", "sum", lhs_feat=[F], device="cuda")
        name, body = re.fullmatch(r"(\w+)\{(.*)\}", text).groups()
        assert name == "gpu_spmm"
        point = {k.strip(): int(v) for k, v in (kv.split("=") for kv in body.split(","))}
        prog = plugin.builtin_program("copy_lhs", "sum", [F], [], device="cuda", schedule="builtin_gpu_spmm",
                                      point=point)
        assert prog.schedule.startswith("builtin_gpu_spmm{")
        assert f"kNnzLanes={point['kNnzLanes']}" in prog.schedule
    with pytest.raises(gsparse.ScheduleError, match="CUDA schedule"):
        plugin.builtin_program("copy_lhs", "sum", [8], [], device="cpu", schedule="builtin_gpu_spmm")
    with pytest.raises(gsparse.ScheduleError, match="rowTails"):
        plugin.builtin_program("copy_lhs", "sum", [32], [], device="cuda", schedule="builtin_gpu_spmm",
                               point={"rowTails": 1})


@pytest.mark.parametrize("device", DEVICES)
def test_attention_layer_of_user_programs_with_derived_backwards(plugin, device):
    # GAT's aggregation from user programs alone: per-edge scores (a per-edge program), edge softmax,
    # the weighted sum (a g-SpMM program); both backwards derived from the messages.
    g, ei = graph()
    F = 5
    scores = gsparse.user_op(plugin.edge_program("attention_scores", features=1, device=device))
    aggregate = gsparse.user_op(plugin.program("weighted_sum", features=F, device=device))
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(g.num_src, F, generator=gen).to(device).requires_grad_()
    a_src = torch.randn(g.num_src, 1, generator=gen).to(device).requires_grad_()
    a_dst = torch.randn(g.num_dst, 1, generator=gen).to(device).requires_grad_()
    bias = torch.randn(g.num_edges, 1, generator=gen).to(device).requires_grad_()
    s = scores(g, a_src=a_src, a_dst=a_dst, bias=bias)
    out = aggregate(g, x=x, w=gsparse.edge_softmax(g, s))
    # Reference: the same computation in PyTorch.
    e = ei.to(device)
    s_ref = torch.nn.functional.leaky_relu(a_src[e[0]] + a_dst[e[1]] + bias, 0.2)
    torch.testing.assert_close(s, s_ref)
    smax = torch.full((g.num_dst, 1), float("-inf"), device=device).scatter_reduce(
        0, e[1].unsqueeze(1), s_ref, "amax", include_self=True)
    ex = torch.exp(s_ref - smax[e[1]])
    den = torch.zeros(g.num_dst, 1, device=device).index_add(0, e[1], ex)
    ref = torch.zeros(g.num_dst, F, device=device).index_add(0, e[1], x[e[0]] * ex / den[e[1]])
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    up = torch.randn(out.shape, generator=gen).to(device)
    got = torch.autograd.grad(out, (x, a_src, a_dst, bias), up)
    want = torch.autograd.grad(ref, (x, a_src, a_dst, bias), up)
    for n, a, b in zip(("x", "a_src", "a_dst", "bias"), got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m, n=n: f"gradient of {n}: {m}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_user_op_derives_the_backward_of_a_max(plugin, device, dynamic):
    # weighted_max without a backward: the winners' program finds each row's winning edge per
    # feature, and G goes to that edge only (no two messages of a row tie here: the duplicate edges
    # differ in w), as PyTorch's scatter_reduce("amax") gives it; rows without in-edges give 0.
    g, ei = graph(device if dynamic else None)
    F = 6
    f = gsparse.user_op(plugin.program("weighted_max", features=F, device=device))
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(g.num_src, F, generator=gen).to(device).requires_grad_()
    w = (torch.rand(g.num_edges, 1, generator=gen) + 0.5).to(device).requires_grad_()
    out = f(g, x=x, w=w)
    ref = weighted(ei, x, w, "max")
    torch.testing.assert_close(out, ref)
    up = torch.randn(out.shape, generator=gen).to(device)
    got = torch.autograd.grad(out, (x, w), up)
    want = torch.autograd.grad(ref, (x, w), up)
    for n, a, b in zip("xw", got, want):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=lambda m, n=n: f"gradient of {n}: {m}")
    backward = plugin.gradients("weighted_max", features=F, device=device)
    assert backward.row_value_operands == ["winner"] and "reading winner" in repr(backward)


@pytest.mark.parametrize("device", DEVICES)
def test_user_op_derives_the_backward_of_a_product(plugin, device):
    # weighted_product without a backward: each message's gradient is G times the product of the
    # row's other messages, also where a row has one or two zero messages; against torch.prod over
    # each row's messages (autograd), rows without in-edges 0.
    g, ei = graph()
    F = 3
    f = gsparse.user_op(plugin.program("weighted_product", features=F, device=device))
    gen = torch.Generator().manual_seed(13)
    x = torch.randn(g.num_src, F, generator=gen)
    x[ei[0, 10], 0] = 0.0  # a zero message in one row, two in another
    x[ei[0, 20], 1] = 0.0
    x[ei[0, 21], 1] = 0.0
    x = x.to(device).requires_grad_()
    w = (torch.rand(g.num_edges, 1, generator=gen) + 0.5).to(device).requires_grad_()
    out = f(g, x=x, w=w)
    msg = x[ei[0].to(device)] * w
    rows = []
    for v in range(g.num_dst):
        mine = (ei[1] == v).nonzero().flatten().to(device)
        rows.append(msg[mine].prod(dim=0) if mine.numel() else torch.zeros(F, device=device))
    ref = torch.stack(rows)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-6)
    up = torch.randn(out.shape, generator=gen).to(device)
    got = torch.autograd.grad(out, (x, w), up)
    want = torch.autograd.grad(ref, (x, w), up)
    for n, a, b in zip("xw", got, want):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m, n=n: f"gradient of {n}: {m}")
    assert plugin.gradients("weighted_product", features=F, device=device).row_value_operands == ["product", "zeros"]


def test_user_op_names_programs_without_a_derived_backward(plugin):
    with pytest.raises(gsparse.ShapeError, match="its message is a tuple"):
        gsparse.user_op(plugin.program("gat_attention", features=4))
    backward = plugin.gradients("gated_mean", features=4)
    assert [(n, form) for n, _, _, form, *_ in backward.operands] == [
        ("x", "reverse_rows"), ("a", "reverse_rows"), ("b", "rows"), ("w", "edges")]
    assert backward.scale is not None and backward.grad_operand == "grad"


@pytest.mark.parametrize("device", DEVICES)
def test_user_op_hands_the_saved_outputs_to_the_backward(plugin, device):
    # save_outputs=True: backward(g, grad, out, **operands) gets the forward's output itself.
    g, _ = graph()
    agg = plugin.program("weighted_sum", features=3, device=device)
    seen = {}

    def backward(g, grad, out, x, w):
        seen["out"] = out
        return {"x": gsparse.gspmm(g.reverse(), "mul", "sum", grad, w)}

    f = gsparse.user_op(agg, backward, save_outputs=True)
    x = torch.randn(g.num_src, 3, device=device, requires_grad=True)
    w = torch.rand(g.num_edges, 1, device=device) + 0.5
    out = f(g, x=x, w=w)
    (dx,) = torch.autograd.grad(out, (x,), torch.ones_like(out))
    torch.testing.assert_close(seen["out"], out.detach())
    torch.testing.assert_close(dx, gsparse.gspmm(g.reverse(), "mul", "sum", torch.ones_like(out), w))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_per_edge_programs_match_pytorch(plugin, device, dynamic):
    # The plugin's gat_score_grad (a per-edge program) on static and dynamic graphs: one value per
    # edge, by edge id, from source, destination and edge operands.
    _, ei = graph()
    ei = ei.to(device)
    n = 60
    g = gsparse.Graph(ei, num_nodes=n, dynamic=dynamic)
    assert "gat_score_grad" in plugin.edge_programs
    prog = plugin.edge_program("gat_score_grad", 1, device=device)
    gen = torch.Generator().manual_seed(1)
    a_src, a_dst, lse, c = (torch.randn(n, 1, generator=gen).to(device) for _ in range(4))
    dalpha = torch.randn(ei.shape[1], 1, generator=gen).to(device)
    got = prog(g, a_src=a_src, a_dst=a_dst, lse=lse, dalpha=dalpha, c=c)
    s = a_src[ei[0]] + a_dst[ei[1]]
    want = torch.where(s > 0, 1.0, 0.2) * torch.exp(torch.nn.functional.leaky_relu(s, 0.2) - lse[ei[1]]) * \
        (dalpha - c[ei[1]])
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(gsparse.ShapeError, match="dalpha"):
        prog(g, a_src=a_src, a_dst=a_dst, lse=lse, dalpha=dalpha[:-1], c=c)
    with pytest.raises(gsparse.ShapeError, match="unknown: w"):
        prog(g, a_src=a_src, a_dst=a_dst, lse=lse, dalpha=dalpha, c=c, w=c)
    with pytest.raises(gsparse.Error, match="no plugin per-edge program named 'nope'"):
        plugin.edge_program("nope", 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_per_edge_programs_under_schedules(plugin, device, dynamic):
    # attention_scores (4 heads) under the plugin's edge schedule and points of the default edge
    # schedule: the same values as PyTorch's gathers whatever the point; an invalid point or an
    # unknown schedule is an error naming it.
    _, ei = graph()
    ei = ei.to(device)
    n, H = 60, 4
    g = gsparse.Graph(ei, num_nodes=n, dynamic=dynamic)
    assert plugin.edge_schedules == ["edge_threads"]
    gen = torch.Generator().manual_seed(2)
    a_src, a_dst = (torch.randn(n, H, generator=gen).to(device) for _ in range(2))
    bias = torch.randn(ei.shape[1], 1, generator=gen).to(device)
    s = a_src[ei[0]] + a_dst[ei[1]] + bias
    want = torch.nn.functional.leaky_relu(s, 0.2)
    if device == "cuda":
        points = [("edge_default", {"feature_tile": 2, "feature_vector": 2, "edges_per_thread": 4}),
                  ("edge_default", {"block_threads": 64}), ("edge_threads", {"edges": 64, "unroll": 4})]
    else:
        points = [("edge_default", {"edges_per_task": 64, "vector_width": 4}), ("edge_threads", {"unroll": 2})]
    for schedule, point in points:
        prog = plugin.edge_program("attention_scores", H, device=device, schedule=schedule, point=point)
        assert prog.schedule.startswith(schedule + "{") and all(f"{k}={v}" in prog.schedule for k, v in point.items())
        torch.testing.assert_close(prog(g, a_src=a_src, a_dst=a_dst, bias=bias), want, rtol=1e-6, atol=1e-6)
    assert plugin.edge_program("attention_scores", H, device=device).schedule.startswith("edge_default{")
    # 4 task sizes x vector widths 1, 4 on the CPU; on CUDA 7 (feature_tile, feature_vector) pairs x
    # 4 block sizes x 3 edges a thread.
    assert len(plugin.edge_schedule_space(H, device)) == (8 if device == "cpu" else 84)
    assert {"edges": 128, "unroll": 4} in plugin.edge_schedule_space(H, schedule="edge_threads")
    assert {"edges": 128, "unroll": 4} not in plugin.edge_schedule_space(6, schedule="edge_threads")
    with pytest.raises(gsparse.ScheduleError, match="feature_vector must divide the feature count"):
        plugin.edge_program("attention_scores", 6, device="cuda", point={"feature_vector": 4})
    with pytest.raises(gsparse.Error, match="no plugin edge schedule named 'row_tasks'"):
        plugin.edge_program("attention_scores", H, schedule="row_tasks")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dynamic", [False, True])
def test_staged_neighbour_tiles(plugin, device, dynamic):
    # weighted_sum under the plugin's staged_tiles schedule (neighbour ids staged a tile at a time,
    # register tiles on CUDA) at points of its space: PyTorch's values, on static and dynamic graphs.
    _, ei = graph()
    ei = ei.to(device)
    g = gsparse.Graph(ei, num_nodes=60, dynamic=dynamic)
    assert "staged_tiles" in plugin.schedules
    space = plugin.schedule_space(16, device, schedule="staged_tiles")
    # CPU: 8 row blocks x 4 tiles; CUDA: also feature threads and register tiles within the rule.
    assert len(space) == 32 if device == "cpu" else len(space) > 32
    assert all(p["feature_threads"] * p["register_tile"] * p["vector"] <= 16 for p in space)
    assert len(plugin.schedule_space(16, device)) == len(plugin.schedule_space(16, device, schedule=None))
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(60, 16, generator=gen).to(device)
    w = torch.randn(ei.shape[1], 1, generator=gen).to(device)
    want = weighted(ei, x, w, "sum")
    points = [{"rows": 1, "nnz_tile": 8}, {"rows": 32, "nnz_tile": 64}]
    if device == "cuda":
        points += [{"rows": 4, "nnz_tile": 16, "feature_threads": 4, "register_tile": 4},
                   {"rows": 16, "nnz_tile": 32, "feature_threads": 8, "register_tile": 2},
                   {"rows": 8, "nnz_tile": 32, "feature_threads": 2, "register_tile": 2, "vector": 4}]
    for point in points:
        prog = plugin.program("weighted_sum", 16, device=device, schedule="staged_tiles", point=point)
        torch.testing.assert_close(prog(g, x=x, w=w), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(gsparse.ScheduleError, match="feature_threads, register_tile and vector are CUDA knobs"):
        plugin.program("weighted_sum", 16, schedule="staged_tiles", point={"register_tile": 2})


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_scatter(plugin, device):
    # weighted_sum under the plugin's nonzero_scatter schedule (runs of consecutive nonzeros a thread,
    # added to their rows atomically) at points of its space: PyTorch's values on a static graph;
    # a dynamic graph (a view of the caller's arrays, no row of every position) is refused by name.
    _, ei = graph()
    ei = ei.to(device)
    assert "nonzero_scatter" in plugin.schedules
    space = plugin.schedule_space(16, device, schedule="nonzero_scatter")
    # CPU: 7 runs x 3 task sizes; CUDA: 7 runs x 6 feature threads (up to 16) x 3 blocks.
    assert len(space) == (21 if device == "cpu" else 7 * 6 * 3)
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(60, 16, generator=gen).to(device)
    w = torch.randn(ei.shape[1], 1, generator=gen).to(device)
    want = weighted(ei, x, w, "sum")
    g = gsparse.Graph(ei, num_nodes=60)
    points = [{"run": 1}, {"run": 64, "task_runs": 64} if device == "cpu" else {"run": 64, "feature_threads": 16}]
    for point in points:
        prog = plugin.program("weighted_sum", 16, device=device, schedule="nonzero_scatter", point=point)
        torch.testing.assert_close(prog(g, x=x, w=w), want, rtol=1e-4, atol=1e-4)
    dynamic = gsparse.Graph(ei, num_nodes=60, dynamic=True)
    with pytest.raises(gsparse.GraphError, match="reduces by nonzeros"):
        prog(dynamic, x=x, w=w)


@pytest.mark.parametrize("device", DEVICES)
def test_programs_of_several_outputs(plugin, device):
    # weighted_sum_and_mean: two outputs of one pass; a tuple from Python, and gradients from a
    # backward given both outputs' gradients.
    g, ei = graph()
    ei = ei.to(device)
    prog = plugin.program("weighted_sum_and_mean", features=8, device=device)
    assert prog.num_outputs == 2 and plugin.program("weighted_sum", 8, device=device).num_outputs == 1
    x = torch.randn(g.num_src, 8, device=device, requires_grad=True)
    w = (torch.rand(g.num_edges, 1, device=device) + 0.5).requires_grad_()
    deg = torch.zeros(g.num_dst, 1, device=device).index_add_(0, ei[1], torch.ones(g.num_edges, 1, device=device))
    want_sum = torch.zeros(g.num_dst, 8, device=device).index_add(0, ei[1], x[ei[0]] * w)
    want_mean = want_sum / deg.clamp(min=1)
    got_sum, got_mean = prog(g, x=x, w=w)
    torch.testing.assert_close(got_sum, want_sum.detach())
    torch.testing.assert_close(got_mean, want_mean.detach())

    def backward(gr, grads, x, w):
        g_sum, g_mean = grads
        both = g_sum + g_mean / deg.clamp(min=1)
        return {"x": gsparse.gspmm(gr.reverse(), "mul", "sum", both, w),
                "w": gsparse.gsddmm(gr, "dot", x, both, "u", "v")}
    op = gsparse.user_op(prog, backward)
    a, b = op(g, x=x, w=w)
    gs, gm = torch.randn_like(a), torch.randn_like(b)
    got = torch.autograd.grad((a * gs).sum() + (b * gm).sum(), [x, w])
    want = torch.autograd.grad((want_sum * gs).sum() + (want_mean * gm).sum(), [x, w])
    for u, v in zip(got, want):
        torch.testing.assert_close(u, v, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_fused_gat_example_matches_gatconv(plugin, device):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "examples", "fused_gat.py")
    spec = importlib.util.spec_from_file_location("fused_gat", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.check(plugin, device)  # outputs and every gradient against gsparse.nn.GATConv(heads=1)


def test_bad_input_is_named(plugin):
    g, _ = graph()
    prog = plugin.program("weighted_max", features=8)
    x = torch.randn(g.num_src, 8)
    w = torch.rand(g.num_edges, 1)
    with pytest.raises(gsparse.ShapeError, match="missing: w"):
        prog(g, x=x)
    with pytest.raises(gsparse.ShapeError, match="unknown: y"):
        prog(g, x=x, w=w, y=w)
    with pytest.raises(gsparse.ShapeError, match=r"read at the edge: shape \[400, 1\]"):
        prog(g, x=x, w=torch.rand(g.num_edges, 8))
    with pytest.raises(gsparse.ShapeError, match="dtype"):
        prog(g, x=x.double(), w=w)
    dyn = gsparse.Graph(torch.tensor([[0, 1], [1, 2]]), num_nodes=60, dynamic=True)
    with pytest.raises(gsparse.ShapeError, match=r"read at the edge: shape \[2, 1\]"):
        prog(dyn, x=x, w=torch.rand(3, 1))
    with pytest.raises(gsparse.Error, match="nope"):
        plugin.program("nope", features=8)
    with pytest.raises(gsparse.Error, match="lanes must divide"):
        plugin.program("weighted_max", features=6, schedule="row_tasks", point={"lanes": 4})
    with pytest.raises(gsparse.ShapeError, match="backward must be callable"):
        gsparse.user_op(prog, "not a function")
    with pytest.raises(gsparse.ShapeError, match="no derived backward: its message is a tuple"):
        gsparse.user_op(plugin.program("gat_attention", features=8), None)
    with pytest.raises(gsparse.Error, match="/nonexistent/plugin.so"):
        gsparse.load_plugin("/nonexistent/plugin.so")
    bad = gsparse.user_op(plugin.program("weighted_sum", 8), lambda g, grad, x, w: {"x": grad[:1]})
    out = bad(g, x=x.requires_grad_(), w=w)
    with pytest.raises(gsparse.ShapeError, match="gave x the shape"):
        out.sum().backward()
