"""Dynamic graphs (built with PyTorch operations on the tensors' device) on the CPU: kernels on
graph views against the static graph's kernels, gradients, CSR input, the sampler's invariants and
determinism, batches of small graphs and pooling, the layers, and bad input. The same checks run
on CUDA in test_dynamic_cuda.py."""

import pytest

import dynamic_cases as C


@pytest.mark.parametrize("check", [C.check_spmm, C.check_sorted_edges, C.check_sddmm, C.check_gradients, C.check_push_gradients,
                                   C.check_from_csr,
                                   C.check_sampler, C.check_sampler_relabel_paths, C.check_uniformity, C.check_sampler_floyd, C.check_uniformity_floyd, C.check_batch_and_pool, C.check_layers, C.check_masked_self_loops, C.check_sage_blocks, C.check_gat_block_shares_the_projection, C.check_segments, C.check_strided_index_tensors, C.check_coo_graphs, C.check_coo_graph_edge_cases,
                                   C.check_index_tensors_modified_after_the_build,
                                   C.check_bad_input], ids=lambda f: f.__name__)
def test_dynamic_cpu(check):
    check("cpu")


def test_native_build_cpu():
    C.check_native_build("cpu")


def test_native_csr_validation_cpu():
    C.check_native_csr_validation("cpu")


@pytest.mark.parametrize("check", [C.check_sorted_edges, C.check_gradients, C.check_strided_index_tensors,
                                   C.check_coo_graph_edge_cases, C.check_index_tensors_modified_after_the_build,
                                   C.check_bad_input, C.check_masked_self_loops, C.check_layers],
                         ids=lambda f: f.__name__)
def test_dynamic_cpu_native_build(check, monkeypatch):
    """Checks of graphs from a COO with the CPU's graphs built by the graph-build kernels, as CUDA
    graphs are (check_native_build compares the arrays of every form; these, what uses them)."""
    from gsparse import _tensor_graph as TG
    monkeypatch.setattr(TG, "NATIVE_BUILD_DEVICES", {"cpu", "cuda"})
    check("cpu")
