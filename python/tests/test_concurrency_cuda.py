"""The checks of test_concurrency.py on CUDA: a stream per thread. Skipped without a CUDA device."""

import pytest
import torch

import concurrency_cases as C

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]


def test_threads_and_streams_cuda():
    C.check_threads_and_streams("cuda")
