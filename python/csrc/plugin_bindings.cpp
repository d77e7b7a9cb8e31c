// gsparse._C.load_plugin: plugins of user programs (dsl/plugin.h) from Python. A plugin's programs
// compile to kernels (dsl::SpmmKernel) that run on a static graph with tensors passed by address;
// the Python side (gsparse/plugins.py) checks the operands and adds autograd.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/error.h"
#include "dsl/plugin.h"
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

/// A compiled program with what Python needs to check its operands.
struct UserKernel {
    dsl::SpmmKernel kernel;
    std::string program;
    std::vector<std::tuple<std::string, std::string, bool>> operands;  ///< (name, src|dst|edge, broadcast)
    int features = 0;
    std::string dtype;
    std::string device;
};

UserKernel compile(const dsl::Plugin &plugin, const std::string &program, int features, const std::string &device,
                   const std::optional<std::string> &schedule, const std::map<std::string, int64_t> &point) {
    dsl::SpmmProgram p = plugin.registry.make_program(program);
    const dsl::ScheduleDef def = schedule ? plugin.registry.make_schedule(*schedule) : dsl::default_schedule();
    UserKernel k{p.compile(features, device_of(device), def, point), program, {}, features, "", device};
    for (const auto &o : p.operands()) k.operands.emplace_back(o.name, dsl::at_name(o.at), o.broadcast);
    const Halide::Type t = p.type();
    k.dtype = t == Halide::Float(32) ? "float32" : t == Halide::Float(64) ? "float64" : "other";
    return k;
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
        .def("compile", &compile, py::arg("program"), py::arg("features"), py::arg("device"), py::arg("schedule"),
             py::arg("point"), py::call_guard<py::gil_scoped_release>(),
             "The program compiled for `features` output features on 'cpu' or 'cuda', under the plugin's schedule "
             "of that name (None: the default user schedule) at `point` (knobs left out take their defaults).");
    py::class_<UserKernel>(m, "UserKernel", "A compiled user program.")
        .def_readonly("program", &UserKernel::program)
        .def_readonly("operands", &UserKernel::operands)
        .def_readonly("features", &UserKernel::features)
        .def_readonly("dtype", &UserKernel::dtype)
        .def_readonly("device", &UserKernel::device)
        .def_property_readonly("num_outputs", [](const UserKernel &k) { return k.kernel.num_outputs(); })
        .def_property_readonly("schedule", [](const UserKernel &k) { return k.kernel.schedule(); })
        .def("run", &run<Graph>, py::arg("graph"), py::arg("operands"), py::arg("outs"), py::arg("launch"),
             py::call_guard<py::gil_scoped_release>(),
             "outs (one [num_dst, features] tensor per output) = the program on the graph.")
        .def("run", &run<GraphView>, py::arg("graph"), py::arg("operands"), py::arg("outs"), py::arg("launch"),
             py::call_guard<py::gil_scoped_release>(),
             "The same on a graph view (a dynamic graph's index arrays, by address).");
    m.def("load_plugin", &dsl::load_plugin, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
          "Loads a plugin of user programs (its gsparse symbols resolve against this module).");
}

}  // namespace gsparse::python
