// gsparse's C++ API for applications.
//
//   gsparse::Graph g = gsparse::Graph::load("cora.mtx");
//   gsparse::Tensor x = ...;                                 // num_src x F, f32
//   gsparse::Tensor h = gsparse::gspmm(g, "copy_lhs", "sum", x, {}).out;   // num_dst x F
//   gsparse::Tensor s = gsparse::gsddmm(g, "dot", h, h, "u", "v");         // num_edges x 1
//
// Shapes follow DGL: dimension 0 is nodes (source nodes for g-SpMM's lhs) or edges (edge ids), the
// rest are feature dimensions that broadcast. Every mismatch throws ShapeError naming the tensors.
// Kernels are compiled on first use and cached (see runtime/kernel_cache.h). Tensors on
// Device::CUDA hold device pointers; the kernels then run on the GPU without copying features,
// and the graph's index arrays are copied to the device once per graph.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "core/tensor.h"
#include "graph/graph.h"
#include "graph/graph_view.h"
#include "ops/broadcast.h"
#include "ops/op_spec.h"
#include "runtime/cuda_launch.h"
#include "runtime/kernel_cache.h"
#include "schedules/schedule_params.h"
#include "api/view_build.h"

namespace gsparse {

struct OpOptions {
    /// A schedule point; the device's expert default when absent.
    std::optional<ScheduleParams> schedule;
    /// The cache compiled kernels go to; the process-wide cache when null.
    KernelCache *cache = nullptr;
    /// For tensors on Device::CUDA (device pointers): where the kernels run.
    CudaLaunch cuda;
};

struct SpmmResult {
    Tensor out;    ///< num_dst x out feature shape
    Tensor arg_u;  ///< max/min: source id per output element (-1 for nodes without in-edges); int32
    Tensor arg_e;  ///< max/min: edge id per output element (-1 likewise); int32
};

/// g-SpMM. lhs: num_src x ... node features (ignored for copy_rhs, may be undefined);
/// rhs: num_edges x ... edge features by edge id (ignored for copy_lhs, may be undefined).
SpmmResult gspmm(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                 const OpOptions &options = {});
SpmmResult gspmm(const Graph &g, const std::string &op, const std::string &reduce, const Tensor &lhs,
                 const Tensor &rhs, const OpOptions &options = {});
/// g-SpMM into caller-provided outputs (e.g. Tensor::wrap of application memory).
void gspmm_into(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                Tensor *arg_u = nullptr, Tensor *arg_e = nullptr, const OpOptions &options = {});

/// g-SDDMM; the result has num_edges rows in edge-id order.
Tensor gsddmm(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
              const OpOptions &options = {});
Tensor gsddmm(const Graph &g, const std::string &op, const Tensor &lhs, const Tensor &rhs,
              const std::string &lhs_target = "u", const std::string &rhs_target = "v",
              const OpOptions &options = {});
void gsddmm_into(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                 const OpOptions &options = {});

/// The same on a graph over caller arrays (graph/graph_view.h: host or device memory, nothing
/// copied): with no schedule given, the graph-blind default of the operator and feature shapes, so
/// that graphs of every size share one compiled kernel. A given schedule must be one that runs on
/// a view (no row orders, row splitting, source tiles, relabeling or destination-grouped edges;
/// KernelError otherwise); a `spmm_segments{...}` point runs gspmm_segments_into (below).
void gspmm_into(const GraphView &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                Tensor *arg_u = nullptr, Tensor *arg_e = nullptr, const OpOptions &options = {});
void gsddmm_into(const GraphView &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                 const OpOptions &options = {});

/// The transposed g-SpMM on a graph view: out[u] = sum over the edges e = (u -> v) of lhs[v] ⊕ rhs[e],
/// lhs [num_dst, ...] divided by v's in-degree when spec.reduce is mean, out [num_src, ...]. It is
/// g-SpMM sum on the reverse graph (the backward of g-SpMM sum / mean for the source features),
/// computed from the CSR by destination without building the reverse graph: rows push their
/// messages to their sources with atomic adds on the GPU, so the order of the additions varies
/// between runs. ⊕ is copy_lhs, copy_rhs, mul or div (ScheduleError otherwise).
void gspmm_transposed_into(const GraphView &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                           Tensor &out, const OpOptions &options = {});

/// g-SpMM by nonzeros on a graph view with its COO (ops/spmm_segment_algorithm.h; gspmm_into on a Graph
/// runs it too for a `spmm_segments{...}` point, over the graph's COO): the same result as
/// gspmm_into for reduce sum or mean and any op, with the edges divided into equal runs whatever the
/// rows' lengths (for heavy-tailed rows); atomic adds on the GPU, so the order of the additions
/// varies between runs. options.schedule: `spmm_segments{run=R}` (R edges a GPU thread adds up in
/// order, schedules/spmm_segments.h; default 32). ScheduleError for max / min or another schedule.
void gspmm_segments_into(const GraphView &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, Tensor &out,
                         const OpOptions &options = {});

/// Output shapes (including the leading dimension).
std::vector<int64_t> gspmm_output_shape(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs);
std::vector<int64_t> gsddmm_output_shape(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs);

/// The schedule point gspmm_into runs on `device` when OpOptions::schedule is not set: the default
/// schedule's choice for this graph's statistics and these operands (on CUDA: spmm_segments{run=R}
/// where the segment gate sends the problem, else the learned selector's row schedule where it
/// decides, else the expert rules; see docs/schedules.md).
ScheduleParams gspmm_default_schedule(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                                      Device device);

/// The same choice from the operands' feature shapes (dims 1.. of lhs and rhs; the operand ⊕ does
/// not read may be empty) and element type, without tensors: what gspmm_into would run on this graph.
/// ShapeError for shapes that do not broadcast. Nothing is compiled and no device is needed
/// (`gsparse-tune --show-default`).
ScheduleParams gspmm_default_schedule(const Graph &g, const SpmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                                      const std::vector<int64_t> &rhs_feat, DType dtype, Device device);

/// The schedule point gsddmm_into runs on `device` when OpOptions::schedule is not set, from the
/// operands' feature shapes and element type (the default schedule's choice for this graph's
/// statistics); nothing is compiled.
ScheduleParams gsddmm_default_schedule(const Graph &g, const SddmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                                       const std::vector<int64_t> &rhs_feat, DType dtype, Device device);

/// The default row schedule (gpu_spmm / cpu_spmm) for the same problem, whatever the segment gate says.
ScheduleParams gspmm_row_default_schedule(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                                          Device device);

}  // namespace gsparse
