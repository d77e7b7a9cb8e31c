"""CUDA-event timing shared by the Python benchmarks."""

import statistics

import torch


def time_cuda(fn, warmup, runs):
    """(median, all times) in ms of `runs` calls of fn, each between two CUDA events on the current
    stream, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), times
