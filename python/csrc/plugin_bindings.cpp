// gsparse._C.load_plugin: plugins of user programs (dsl/plugin.h) from Python. A plugin's programs
// compile to kernels (dsl::SpmmKernel, dsl::SddmmKernel for per-edge programs) that run on a
// static graph or a dynamic graph's view with tensors passed by address;
// the Python side (gsparse/plugins.py) checks the operands and adds autograd.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <utility>

#include "bindings.h"
#include "core/error.h"
#include "dsl/builtin_programs.h"
#include "dsl/plugin.h"
#include "dsl/user_gradients.h"
#include "graph/graph_view.h"
#include "tensor_args.h"

namespace py = pybind11;

namespace gsparse::python {

namespace {

Device device_of(const std::string &device) {
    if (device == "cpu") return Device::CPU;
    if (device == "cuda") return Device::CUDA;
    fail<ShapeError>("device must be 'cpu' or 'cuda', got '", device, "'");
}

std::string dtype_of(const Halide::Type &t) {
    return t == Halide::Float(32) ? "float32" : t == Halide::Float(64) ? "float64" : "other";
}

/// A compiled program (g-SpMM-shaped: dsl::SpmmKernel; per edge: dsl::SddmmKernel) with what
/// Python needs to check its operands.
template <typename Kernel>
struct Compiled {
    /// The plugin's library, kept loaded while the kernel lives: a kernel keeps the program's monoid
    /// and its schedule's functions (to compile the points for_graph picks), code of the plugin.
    /// Declared first, so it is released last.
    std::shared_ptr<void> library;
    Kernel kernel;
    std::string program;
    /// (name, src|dst|edge, broadcast, columns, the column each feature reads): columns 0 and no map
    /// for operands declared without Columns.
    std::vector<std::tuple<std::string, std::string, bool, int, std::vector<int32_t>>> operands;
    int features = 0;
    std::string dtype;
    std::string device;
};
using UserKernel = Compiled<dsl::SpmmKernel>;
using UserEdgeKernel = Compiled<dsl::SddmmKernel>;

template <typename Kernel, typename Program>
Compiled<Kernel> describe(std::shared_ptr<void> library, Kernel kernel, const Program &p, const std::string &program,
                          int features, const std::string &device) {
    Compiled<Kernel> k{std::move(library), std::move(kernel), program, {}, features, dtype_of(p.type()), device};
    for (const auto &o : p.operands())
        k.operands.emplace_back(o.name, dsl::at_name(o.at), o.broadcast, o.columns, p.column_map(o.name, features));
    return k;
}

/// The plugin's schedule of that name, or the default user schedule for none.
dsl::ScheduleDef schedule_of(const dsl::Plugin &plugin, const std::optional<std::string> &schedule) {
    return schedule ? plugin.registry.make_schedule(*schedule) : dsl::default_schedule();
}

UserKernel compile(const dsl::Plugin &plugin, const std::string &program, int features, const std::string &device,
                   const std::optional<std::string> &schedule, const std::map<std::string, int64_t> &point) {
    dsl::SpmmProgram p = plugin.registry.make_program(program);
    const dsl::ScheduleDef def = schedule_of(plugin, schedule);
    return describe(plugin.handle, p.compile(features, device_of(device), def, point), p, program, features, device);
}

/// The built-in g-SpMM operator (op, reduce) on operands of these feature shapes as a user program
/// (dsl/builtin_programs.h), compiled under the plugin's schedule of that name (or the default user
/// schedule): the same algorithm through the public DSL, beside the built-in operator.
UserKernel compile_builtin(const dsl::Plugin &plugin, const std::string &op, const std::string &reduce,
                           const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat,
                           const std::string &device, const std::optional<std::string> &schedule,
                           const std::map<std::string, int64_t> &point) {
    const SpmmSpec spec{parse_binary_op(op), parse_reduce_op(reduce)};
    const std::vector<int64_t> lf = uses_lhs(spec.op) ? lhs_feat : std::vector<int64_t>{};
    const std::vector<int64_t> rf = uses_rhs(spec.op) ? rhs_feat : std::vector<int64_t>{};
    dsl::SpmmProgram p = dsl::spmm_program(spec, lf, rf);
    const int features = static_cast<int>(dsl::program_features(spec.op, lf, rf));
    const dsl::ScheduleDef def = schedule_of(plugin, schedule);
    return describe(plugin.handle, p.compile(features, device_of(device), def, point), p, p.name(), features, device);
}

/// The plugin's edge schedule of that name, or the default edge schedule for none.
dsl::EdgeScheduleDef edge_schedule_of(const dsl::Plugin &plugin, const std::optional<std::string> &schedule) {
    return schedule ? plugin.registry.make_edge_schedule(*schedule) : dsl::default_edge_schedule();
}

UserEdgeKernel compile_edge(const dsl::Plugin &plugin, const std::string &program, int features,
                            const std::string &device, const std::optional<std::string> &schedule,
                            const std::map<std::string, int64_t> &point) {
    dsl::SddmmProgram p = plugin.registry.make_edge_program(program);
    const dsl::EdgeScheduleDef def = edge_schedule_of(plugin, schedule);
    return describe(plugin.handle, p.compile(features, device_of(device), def, point), p, program, features, device);
}

/// A program's derived backward (dsl/user_gradients.h), compiled: the name under which its programs
/// read the output's gradient, the scale program (or none), per forward operand (name, where it is
/// read, broadcast, form: rows | reverse_rows | edges, its compiled g-SpMM or per-edge program, and for
/// an operand of Columns the column each feature reads, by which its gradient sums them), and
/// for max / min / product the names under which they read the row values and the program that
/// computes them (or [], none).
using OperandGradientKernel = std::tuple<std::string, std::string, bool, std::string, std::optional<UserKernel>,
                                         std::optional<UserEdgeKernel>, int, std::vector<int32_t>>;
using GradientKernels = std::tuple<std::string, std::optional<UserKernel>, std::vector<OperandGradientKernel>,
                                   std::vector<std::string>, std::optional<UserKernel>>;

/// The derived backward of a g-SpMM-shaped program (edges = false) or a per-edge one, compiled.
GradientKernels compile_gradients(const dsl::Plugin &plugin, const std::string &program, int features,
                                  const std::string &device, bool edges) {
    std::optional<dsl::SpmmProgram> forward;
    std::optional<dsl::SddmmProgram> edge_forward;
    if (edges) edge_forward = plugin.registry.make_edge_program(program);
    else forward = plugin.registry.make_program(program);
    const dsl::ProgramGradients grads = edges ? dsl::derive_gradients(*edge_forward) : dsl::derive_gradients(*forward);
    auto column_map = [&](const std::string &operand) {
        return edges ? edge_forward->column_map(operand, features) : forward->column_map(operand, features);
    };
    const Device d = device_of(device);
    auto rows = [&](const dsl::SpmmProgram &p) {
        return describe(plugin.handle, p.compile(features, d), p, p.name(), features, device);
    };
    std::optional<UserKernel> scale;
    if (grads.scale) scale = rows(*grads.scale);
    std::vector<OperandGradientKernel> operands;
    for (const dsl::OperandGradient &g : grads.operands) {
        using Form = dsl::OperandGradient::Form;
        const char *form = g.form == Form::Rows ? "rows" : g.form == Form::ReverseRows ? "reverse_rows" : "edges";
        std::optional<UserKernel> k;
        std::optional<UserEdgeKernel> e;
        if (g.form == Form::Edges)
            e = describe(plugin.handle, g.edges->compile(features, d), *g.edges, g.edges->name(), features, device);
        else
            k = rows(*g.rows);
        operands.emplace_back(g.operand, dsl::at_name(g.at), g.broadcast, form, std::move(k), std::move(e), g.columns,
                              column_map(g.operand));
    }
    std::optional<UserKernel> row_values;
    if (grads.row_values) row_values = rows(*grads.row_values);
    return {grads.grad_operand, std::move(scale), std::move(operands), grads.row_value_operands, std::move(row_values)};
}

/// The Python class of a compiled program, with its description as read-only attributes.
template <typename Kernel>
py::class_<Compiled<Kernel>> bind_compiled(py::module_ &m, const char *name, const char *doc) {
    using K = Compiled<Kernel>;
    return py::class_<K>(m, name, doc)
        .def_readonly("program", &K::program)
        .def_readonly("operands", &K::operands)
        .def_readonly("features", &K::features)
        .def_readonly("dtype", &K::dtype)
        .def_readonly("device", &K::device);
}

template <typename G>
void run_edge(const UserEdgeKernel &k, const G &g, const std::map<std::string, TensorArg> &operands,
              const TensorArg &out, const std::optional<LaunchArg> &launch) {
    std::map<std::string, Tensor> views;
    for (const auto &[name, arg] : operands) views.emplace(name, view_tensor(arg, name.c_str()));
    Tensor o = view_tensor(out, "out");
    k.kernel.run(g, views, o, cuda_launch(launch));
}

/// Runs k on a Graph or a GraphView (a dynamic graph's arrays) with tensors passed by address.
template <typename G>
void run(const UserKernel &k, const G &g, const std::map<std::string, TensorArg> &operands,
         const std::vector<TensorArg> &outs, const std::optional<LaunchArg> &launch) {
    std::map<std::string, Tensor> views;
    for (const auto &[name, arg] : operands) views.emplace(name, view_tensor(arg, name.c_str()));
    std::vector<Tensor> o;
    for (const TensorArg &arg : outs) o.push_back(view_tensor(arg, "out"));
    std::vector<Tensor *> ptrs;
    for (Tensor &t : o) ptrs.push_back(&t);
    k.kernel.run(g, views, ptrs, cuda_launch(launch));
}

}  // namespace

void bind_plugins(py::module_ &m) {
    py::class_<dsl::Plugin>(m, "Plugin", "A loaded plugin of user programs and schedules (dsl/plugin.h).")
        .def_readonly("path", &dsl::Plugin::path)
        .def_property_readonly("programs", [](const dsl::Plugin &p) { return p.registry.program_names(); })
        .def_property_readonly("schedules", [](const dsl::Plugin &p) { return p.registry.schedule_names(); })
        .def_property_readonly("edge_programs", [](const dsl::Plugin &p) { return p.registry.edge_program_names(); })
        .def_property_readonly("edge_schedules",
                               [](const dsl::Plugin &p) { return p.registry.edge_schedule_names(); })
        .def(
            "schedule_space",
            [](const dsl::Plugin &p, const std::optional<std::string> &schedule, int features, const std::string &device) {
                return schedule_of(p, schedule).space(features, device_of(device));
            },
            py::arg("schedule"), py::arg("features"), py::arg("device"),
            "Every valid point ({knob: value}) of the schedule of that name (None: the default user schedule) for "
            "`features` features on 'cpu' or 'cuda'.")
        .def(
            "edge_schedule_space",
            [](const dsl::Plugin &p, const std::optional<std::string> &schedule, int features, const std::string &device) {
                return edge_schedule_of(p, schedule).space(features, device_of(device));
            },
            py::arg("schedule"), py::arg("features"), py::arg("device"),
            "Every valid point ({knob: value}) of the edge schedule of that name (None: the default edge "
            "schedule) for `features` features on 'cpu' or 'cuda'.")
        .def("compile_edge", &compile_edge, py::arg("program"), py::arg("features"), py::arg("device"),
             py::arg("schedule") = std::nullopt, py::arg("point") = std::map<std::string, int64_t>{},
             py::call_guard<py::gil_scoped_release>(),
             "The per-edge program compiled for `features` output features on 'cpu' or 'cuda', under the plugin's "
             "edge schedule of that name (None: the default edge schedule) at `point`.")
        .def("compile", &compile, py::arg("program"), py::arg("features"), py::arg("device"), py::arg("schedule"),
             py::arg("point"), py::call_guard<py::gil_scoped_release>(),
             "The program compiled for `features` output features on 'cpu' or 'cuda', under the plugin's schedule "
             "of that name (None: the default user schedule) at `point` (knobs left out take their defaults).")
        .def("compile_builtin", &compile_builtin, py::arg("op"), py::arg("reduce"), py::arg("lhs_feat"),
             py::arg("rhs_feat"), py::arg("device"), py::arg("schedule"), py::arg("point"),
             py::call_guard<py::gil_scoped_release>(),
             "The built-in g-SpMM operator (op, reduce) on operands of these feature shapes as a user program "
             "(dsl/builtin_programs.h: operands lhs and rhs, max/min without arg ids), compiled under the plugin's "
             "schedule of that name (None: the default user schedule) at `point`.")
        .def("compile_gradients", &compile_gradients, py::arg("program"), py::arg("features"), py::arg("device"),
             py::arg("edges") = false, py::call_guard<py::gil_scoped_release>(),
             "The derived backward (dsl/user_gradients.h) of a program that sums, maximises, minimises or "
             "multiplies its message, or with edges=True of a per-edge program, compiled: (grad operand name, "
             "scale program or None, [(operand, at, broadcast, form, program or None, edge program or None, columns, "
             "the column each feature reads)], "
             "[row value operand names], row values' program or None).");
    bind_compiled<dsl::SpmmKernel>(m, "UserKernel", "A compiled user program.")
        .def_property_readonly("num_outputs", [](const UserKernel &k) { return k.kernel.num_outputs(); })
        .def_property_readonly("schedule", [](const UserKernel &k) { return k.kernel.schedule(); })
        .def("schedule_on", [](const UserKernel &k, const Graph &g) { return k.kernel.schedule(g); }, py::arg("graph"),
             "The point it runs on the graph (the schedule's run-time choice, or the compiled point).")
        .def("schedule_on", [](const UserKernel &k, const GraphView &g) { return k.kernel.schedule(g); },
             py::arg("graph"))
        .def_property_readonly("orders_rows", [](const UserKernel &k) { return k.kernel.orders_rows(); },
                               "Whether its schedule runs rows in order of in-degree (the view needs a row order).")
        .def("run", &run<Graph>, py::arg("graph"), py::arg("operands"), py::arg("outs"), py::arg("launch"),
             py::call_guard<py::gil_scoped_release>(),
             "outs (one [num_dst, features] tensor per output) = the program on the graph.")
        .def("run", &run<GraphView>, py::arg("graph"), py::arg("operands"), py::arg("outs"), py::arg("launch"),
             py::call_guard<py::gil_scoped_release>(),
             "The same on a graph view (a dynamic graph's index arrays, by address).");
    bind_compiled<dsl::SddmmKernel>(m, "UserEdgeKernel", "A compiled per-edge user program.")
        .def_property_readonly("schedule", [](const UserEdgeKernel &k) { return k.kernel.schedule(); })
        .def("run", &run_edge<Graph>, py::arg("graph"), py::arg("operands"), py::arg("out"), py::arg("launch"),
             py::call_guard<py::gil_scoped_release>(), "out ([num_edges, features], by edge id) = the program.")
        .def("run", &run_edge<GraphView>, py::arg("graph"), py::arg("operands"), py::arg("out"), py::arg("launch"),
             py::call_guard<py::gil_scoped_release>(), "The same on a graph view's COO (by address).");
    m.def("load_plugin", &dsl::load_plugin, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
          "Loads a plugin of user programs (its gsparse symbols resolve against this module).");
}

}  // namespace gsparse::python
