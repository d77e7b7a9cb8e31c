"""The checks of test_dynamic.py on CUDA tensors: dynamic graphs built on the GPU, their kernels
against the static graph's CPU kernels. Skipped without a CUDA device."""

import pytest
import torch

import dynamic_cases as C

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]


@pytest.mark.parametrize("check", [C.check_spmm, C.check_sorted_edges, C.check_sddmm, C.check_gradients, C.check_push_gradients,
                                   C.check_from_csr,
                                   C.check_sampler, C.check_sampler_relabel_paths, C.check_uniformity, C.check_sampler_floyd, C.check_uniformity_floyd, C.check_batch_and_pool, C.check_layers, C.check_masked_self_loops, C.check_sage_blocks, C.check_gat_block_shares_the_projection, C.check_segments, C.check_strided_index_tensors, C.check_coo_graphs, C.check_coo_graph_edge_cases,
                                   C.check_index_tensors_modified_after_the_build,
                                   C.check_bad_input, C.check_native_build, C.check_native_csr_validation],
                         ids=lambda f: f.__name__)
def test_dynamic_cuda(check):
    if check is C.check_spmm:
        C.check_spmm("cuda", feats=(1, 5, 33, 64, 256))
    else:
        check("cuda")
