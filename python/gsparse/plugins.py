"""gsparse.load_plugin: user programs (docs/dsl.md) from Python, with autograd through a backward
the user gives.

    plugin = gsparse.load_plugin("libmy_programs.so")          # a C++ plugin: GSPARSE_PLUGIN(...)
    agg = plugin.program("weighted_sum", features=64)          # compiled once (CPU; device="cuda")
    out = agg(g, x=x, w=w)                                     # out [num_dst, 64]

    def agg_backward(g, grad, x, w):                           # other user programs, gsparse ops, torch
        return {"x": gsparse.gspmm(g.reverse(), "mul", "sum", grad, w),
                "w": gsparse.gsddmm(g, "dot", x, grad, "u", "v")}
    weighted_sum = gsparse.user_op(agg, agg_backward)
    out = weighted_sum(g, x=x, w=w)                            # differentiable
    weighted_sum = gsparse.user_op(agg)                        # the same, backward derived from the message

    weights = plugin.edge_program("gat_weights", features=1)  # per-edge (g-SDDMM-shaped) programs
    w = weights(g, a_src=a_src, a_dst=a_dst, lse=lse)          # w [num_edges, 1], by edge id

A user program reads its operands by name: [num_src, F] at the source, [num_dst, F] at the
destination or [num_edges, F] at the edge (one column when declared broadcast), in the program's
type, on the program's device; it runs on static graphs and on dynamic ones (mini-batch blocks,
batches: their arrays are read where they are). The plugin resolves gsparse's symbols against this
package's native module.
"""

import ctypes
import os

import torch

from ._native import ShapeError, _C, launch_arg, tensor_arg
from .graph import Graph

_ROWS = {"source": "num_src", "destination": "num_dst", "edge": "num_edges"}
_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def load_plugin(path):
    """The plugin at `path` (a shared module of user programs and schedules, dsl/plugin.h);
    gsparse.Error naming the file when it cannot be loaded or is not a gsparse plugin."""
    # A plugin does not link gsparse: its symbols resolve against gsparse._C, which Python loaded
    # with local symbols; loading it again with RTLD_GLOBAL (and RTLD_NOLOAD) makes them global.
    ctypes.CDLL(_C.__file__, mode=os.RTLD_GLOBAL | getattr(os, "RTLD_NOLOAD", 0))
    return Plugin(_C.load_plugin(os.fspath(path)))


class Plugin:
    """A loaded plugin: its programs and schedules by name."""

    def __init__(self, native):
        self._native = native
        self._compiled = {}

    @property
    def path(self):
        return self._native.path

    @property
    def programs(self):
        return list(self._native.programs)

    @property
    def schedules(self):
        return list(self._native.schedules)

    @property
    def edge_programs(self):
        return list(self._native.edge_programs)

    def program(self, name, features, device="cpu", schedule=None, point=None):
        """Program `name` compiled for `features` output features on `device`, under the plugin's
        schedule `schedule` (None: the default user schedule) at `point` ({knob: value}; knobs left out
        take their defaults). Compiled once per argument set."""
        device = _device_type(device)
        point = {str(k): int(v) for k, v in (point or {}).items()}
        key = (name, int(features), device, schedule, tuple(sorted(point.items())))
        if key not in self._compiled:
            self._compiled[key] = UserProgram(self._native.compile(name, int(features), device, schedule, point),
                                              plugin=self, name=name)
        return self._compiled[key]

    def builtin_program(self, op, reduce, lhs_shape, rhs_shape=(), device="cpu", schedule=None, point=None):
        """The built-in g-SpMM operator gsparse.gspmm(g, op, reduce, lhs, rhs) as a user program (the
        same algorithm through the public DSL, dsl/builtin_programs.h) under the plugin's schedule
        `schedule` (None: the default user schedule) at `point`: lhs_shape and rhs_shape are the
        operands' feature shapes (broadcast by DGL's rules; the one op does not read is ignored), its
        operands lhs [num_src, prod(lhs_shape)] and rhs [num_edges, prod(rhs_shape)] (one column a
        head where they broadcast), its output [num_dst, F] (F: the broadcast shape's product);
        max and min give the values without arg ids. Compiled once per argument set."""
        device = _device_type(device)
        point = {str(k): int(v) for k, v in (point or {}).items()}
        lhs_shape, rhs_shape = [int(x) for x in lhs_shape], [int(x) for x in rhs_shape]
        key = ("builtin", op, reduce, tuple(lhs_shape), tuple(rhs_shape), device, schedule, tuple(sorted(point.items())))
        if key not in self._compiled:
            self._compiled[key] = UserProgram(
                self._native.compile_builtin(op, reduce, lhs_shape, rhs_shape, device, schedule, point))
        return self._compiled[key]

    def gradients(self, name, features, device="cpu"):
        """The backward of program `name` derived from its message (programs that sum their message,
        optionally with a finalize linear in the sum such as a mean, programs that take its maximum,
        minimum or product, and per-edge programs; docs/dsl.md), compiled for `features` features on
        `device`: a DerivedBackward.
        gsparse.ShapeError naming why a program has none (another reduction, a message that reads
        node or edge ids, an operation without a derivative rule). Compiled once per argument set."""
        device = _device_type(device)
        key = ("gradients", name, int(features), device)
        if key not in self._compiled:
            edges = name in self._native.edge_programs
            self._compiled[key] = DerivedBackward(*self._native.compile_gradients(name, int(features), device, edges))
        return self._compiled[key]

    @property
    def edge_schedules(self):
        return list(self._native.edge_schedules)

    def schedule_space(self, features, device="cpu", schedule=None):
        """Every valid point ({knob: value}) of the plugin's schedule `schedule` (None: the default
        user schedule) for g-SpMM-shaped programs of `features` features on `device`: what a search
        over it measures."""
        return [dict(p) for p in self._native.schedule_space(schedule, int(features), _device_type(device))]

    def edge_schedule_space(self, features, device="cpu", schedule=None):
        """Every valid point ({knob: value}) of the plugin's edge schedule `schedule` (None: the
        default edge schedule) for `features` features on `device`: what a search over it measures."""
        return [dict(p) for p in self._native.edge_schedule_space(schedule, int(features), _device_type(device))]

    def edge_program(self, name, features, device="cpu", schedule=None, point=None):
        """Per-edge (g-SDDMM-shaped) program `name` compiled for `features` output features on
        `device`, under the plugin's edge schedule `schedule` (None: the default edge schedule,
        edge_default) at `point` ({knob: value}; knobs left out take their defaults). Compiled once
        per argument set."""
        device = _device_type(device)
        point = {str(k): int(v) for k, v in (point or {}).items()}
        key = ("edge", name, int(features), device, schedule, tuple(sorted(point.items())))
        if key not in self._compiled:
            self._compiled[key] = EdgeProgram(self._native.compile_edge(name, int(features), device, schedule, point),
                                              plugin=self, name=name)
        return self._compiled[key]

    def __repr__(self):
        return (f"Plugin({self.path!r}, programs={self.programs}, edge_programs={self.edge_programs}, "
                f"schedules={self.schedules}, edge_schedules={self.edge_schedules})")


def _device_type(device):
    device = torch.device(device).type
    if device not in ("cpu", "cuda"):
        raise ShapeError(f"user programs run on the CPU or CUDA, not {device}")
    return device


class _Compiled:
    """What user programs of both shapes share: their declared operands and the checks of a call."""

    def __init__(self, kernel, plugin=None, name=None):
        self._kernel = kernel
        self._origin = (plugin, name)  # where its derived backward comes from (Plugin.gradients)
        self.name, self.features = kernel.program, kernel.features
        # (name, source|destination|edge, broadcast, columns): columns 0 unless declared with Columns
        self.operands = [(n, at, b, c) for n, at, b, c, _ in kernel.operands]
        self.dtype = _DTYPES.get(kernel.dtype)
        self.device = kernel.device  # "cpu" or "cuda"

    @property
    def schedule(self):
        """The schedule point it was compiled at."""
        return self._kernel.schedule

    @property
    def operand_names(self):
        return [n for n, _, _, _ in self.operands]

    def _operand_args(self, g, operands):
        """The operands checked against the declaration (names, shapes, dtype, device) as tensor
        arguments, with the contiguous copies the kernel reads (keep them alive until it ran) and
        their device."""
        if not isinstance(g, Graph):
            raise ShapeError(f"g must be a gsparse.Graph, got {type(g).__name__}")
        names = self.operand_names
        unknown = sorted(set(operands) - set(names))
        missing = [n for n in names if operands.get(n) is None]
        if unknown or missing:
            raise ShapeError(f"user program {self.name} takes the operands {', '.join(names)}"
                             + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                             + (f"; missing: {', '.join(missing)}" if missing else ""))
        if self.dtype is None:
            raise ShapeError(f"user program {self.name} has type {self._kernel.dtype}; Python calls take float32 "
                             "or float64 programs")
        args, dense, device = {}, [], None
        for name, at, broadcast, columns in self.operands:
            t = operands[name]
            if not isinstance(t, torch.Tensor):
                raise ShapeError(f"operand {name} must be a torch.Tensor, got {type(t).__name__}")
            rows = getattr(g, _ROWS[at])
            want = (rows, columns if columns else 1 if broadcast else self.features)
            if tuple(t.shape) != want:
                raise ShapeError(f"operand {name} of {self.name} is read at the {at}: shape {list(want)} expected, "
                                 f"got {list(t.shape)}")
            if t.dtype != self.dtype:
                raise ShapeError(f"operand {name} has dtype {t.dtype}; {self.name} computes in {self.dtype}")
            if t.device.type != self.device:
                raise ShapeError(f"operand {name} is on {t.device} but {self.name} was compiled for {self.device}")
            if device is None:
                device = t.device
            elif t.device != device:
                raise ShapeError(f"operand {name} is on {t.device} but another on {device}")
            t = t.detach().contiguous()
            dense.append(t)
            args[name] = tensor_arg(t, name)
        if device is None:  # a program without operands: its output goes to the graph's device
            device = g._t.device if g._t is not None else torch.device(self.device)
        if g._t is not None and g._t.device.type != device.type:
            raise ShapeError(f"the graph's arrays are on {g._t.device} but the operands on {device}")
        return args, dense, device


class EdgeProgram(_Compiled):
    """A compiled per-edge user program: call it with a Graph and its operands by name; it returns
    [num_edges, features] by edge id."""

    num_outputs = 1

    def __call__(self, g, **operands):
        args, dense, device = self._operand_args(g, operands)
        out = torch.empty((g.num_edges, self.features), dtype=self.dtype, device=device)
        # A dynamic graph: its COO in edge-id order, by address.
        view = g._t.coo_view() if g._t is not None else g._g
        self._kernel.run(view, args, tensor_arg(out, "out"), launch_arg(device))
        del dense
        return out

    def __repr__(self):
        return f"EdgeProgram({self.name}, features={self.features}, schedule={self.schedule})"


class UserProgram(_Compiled):
    """A compiled user program: call it with a Graph and its operands by name."""

    def __init__(self, kernel, plugin=None, name=None):
        super().__init__(kernel, plugin, name)
        self.num_outputs = kernel.num_outputs  # several with finalize_outputs: calls return a tuple

    def _graph_arg(self, g):
        """What the kernel takes for g: a dynamic graph's view (its arrays where they are, with the
        row order when the schedule orders rows), else the native graph."""
        return g._t.user_view(row_order=self._kernel.orders_rows) if g._t is not None else g._g

    def schedule_on(self, g):
        """The point it runs on graph g: the compiled one, or the one its schedule picks for g (the
        default schedule runs a thread per row on graphs whose rows are all short)."""
        if not isinstance(g, Graph):
            raise ShapeError(f"g must be a gsparse.Graph, got {type(g).__name__}")
        return self._kernel.schedule_on(self._graph_arg(g))

    def __call__(self, g, **operands):
        # The kernel reads the operands by address: `dense` keeps the contiguous copies alive.
        args, dense, device = self._operand_args(g, operands)
        outs = [torch.empty((g.num_dst, self.features), dtype=self.dtype, device=device)
                for _ in range(self.num_outputs)]
        out_args = [tensor_arg(o, "out") for o in outs]
        self._kernel.run(self._graph_arg(g), args, out_args, launch_arg(device))
        del dense
        return outs[0] if self.num_outputs == 1 else tuple(outs)

    def __repr__(self):
        return f"UserProgram({self.name}, features={self.features}, schedule={self.schedule})"


class DerivedBackward:
    """The backward of a user program derived from its message (Plugin.gradients): with
    G = grad_out * scale(g) (the finalize's derivative; 1 without a finalize; a per-edge program's G
    is its output's gradient, read at the edge), an operand read at the destination gets a g-SpMM
    program on the graph, one read at the source a g-SpMM program on the reverse graph, one read at
    the edge a per-edge program, each over G and the forward operands it needs; a broadcast operand
    the sum of its gradient's features, an operand of columns (Columns) per column the sum of the
    features that read it. A max, min or product program first computes per-row values
    (row_values, one more pass over the edges: each row's winning edge per feature; the product of
    the nonzero messages and the count of zero ones) that its gradient programs read."""

    def __init__(self, grad_operand, scale, operands, row_value_operands=(), row_values=None):
        self.grad_operand = grad_operand
        self.scale = UserProgram(scale) if scale is not None else None
        # (name, at, broadcast, form, program, columns, the column each feature reads or None)
        self.operands = [(name, at, broadcast, form, UserProgram(rows) if rows is not None else EdgeProgram(edges),
                          columns, columns_of if columns else None)
                         for name, at, broadcast, form, rows, edges, columns, columns_of in operands]
        self.row_value_operands = list(row_value_operands)
        self.row_values = UserProgram(row_values) if row_values is not None else None

    def __call__(self, g, grad, **operands):
        """{operand name: gradient} of the program's output against grad (its gradient)."""
        if self.scale is not None:
            grad = grad * self.scale(g)
        given = {self.grad_operand: grad}
        if self.row_values is not None:
            values = self.row_values(g, **{n: operands[n] for n in self.row_values.operand_names})
            values = values if isinstance(values, tuple) else (values,)
            given.update(zip(self.row_value_operands, values))
        grads = {}
        for name, _, broadcast, form, prog, columns, columns_of in self.operands:
            args = {n: given[n] if n in given else operands[n] for n in prog.operand_names}
            d = prog(g.reverse() if form == "reverse_rows" else g, **args)
            if columns:  # each column's gradient: the sum over the features that read it
                index = torch.tensor(columns_of, dtype=torch.long, device=d.device)
                grads[name] = d.new_zeros(d.shape[0], columns).index_add_(1, index, d)
            else:
                grads[name] = d.sum(dim=1, keepdim=True) if broadcast else d
        return grads

    def __repr__(self):
        forms = ", ".join(f"{n}: {form}" for n, _, _, form, *_ in self.operands)
        extra = (", scaled" if self.scale is not None else "") + \
            (f", reading {', '.join(self.row_value_operands)}" if self.row_values is not None else "")
        return f"DerivedBackward({forms}{extra})"


def user_op(program, backward=None, save_outputs=False):
    """A differentiable operator from a user program: forward runs `program(g, **operands)`;
    backward(g, grad_out, **operands) returns {operand name: its gradient (or None)}, written with
    other user programs, gsparse's operators or PyTorch (grad_out: a tuple of the outputs' gradients
    for a program of several outputs). With save_outputs, the forward's outputs are kept for the
    backward, called as backward(g, grad_out, out, **operands) (out: the output, or the tuple of
    them). backward=None derives it from the program's message (Plugin.gradients: programs that
    sum their message, and per-edge programs; ShapeError naming why another program has none).
    program may also be a per-edge program (Plugin.edge_program). Returns f(g, **operands)."""
    if not isinstance(program, (UserProgram, EdgeProgram)):
        raise ShapeError("program must be a UserProgram or EdgeProgram (Plugin.program, Plugin.edge_program), got "
                         f"{type(program).__name__}")
    if backward is None:
        plugin, name = program._origin
        if plugin is None:
            raise ShapeError(f"user program {program.name} does not come from a plugin: give its backward")
        if save_outputs:
            raise ShapeError("save_outputs applies to a given backward, not a derived one")
        backward = plugin.gradients(name, program.features, program.device)
    if not callable(backward):
        raise ShapeError("backward must be callable: backward(g, grad_out, **operands) -> {name: grad}")
    names = tuple(program.operand_names)

    class _UserOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, g, *tensors):
            ctx.g = g
            result = program(g, **dict(zip(names, tensors)))
            outs = result if isinstance(result, tuple) else (result,)
            ctx.save_for_backward(*tensors, *(outs if save_outputs else ()))
            return result

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grad):
            saved = ctx.saved_tensors
            ops = dict(zip(names, saved[:len(names)]))
            grad = tuple(d.contiguous() for d in grad)
            grad = grad[0] if len(grad) == 1 else grad
            if save_outputs:
                outs = saved[len(names):]
                grads = backward(ctx.g, grad, outs[0] if len(outs) == 1 else outs, **ops)
            else:
                grads = backward(ctx.g, grad, **ops)
            if not isinstance(grads, dict) or set(grads) - set(names):
                raise ShapeError(f"the backward of {program.name} must return {{name: gradient}} for the operands "
                                 f"{', '.join(names)}, got {grads if not isinstance(grads, dict) else sorted(grads)}")
            out = []
            for n in names:
                d = grads.get(n)
                if d is not None and d.shape != ops[n].shape:
                    raise ShapeError(f"the backward of {program.name} gave {n} the shape {list(d.shape)}, "
                                     f"not {list(ops[n].shape)}")
                out.append(d if ctx.needs_input_grad[1 + names.index(n)] else None)
            return (None, *out)

    def apply(g, **operands):
        unknown = sorted(set(operands) - set(names))
        if unknown:
            raise ShapeError(f"user program {program.name} takes the operands {', '.join(names)}; "
                             f"unknown: {', '.join(unknown)}")
        return _UserOp.apply(g, *[operands.get(n) for n in names])

    apply.__name__ = program.name
    apply.__doc__ = f"User program {program.name} with autograd ({', '.join(names)})."
    return apply
