"""Kernels from several threads at once on the CPU (concurrency_cases.py); test_concurrency_cuda.py
runs the same with a CUDA stream per thread."""

import concurrency_cases as C


def test_threads_cpu():
    C.check_threads_and_streams("cpu")
