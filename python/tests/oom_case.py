"""The out-of-GPU-memory case of test_cuda.py, run as a process of its own: a static graph whose
device copies do not fit in the GPU's free memory gives a KernelError naming the problem, the failed
call keeps no device memory, and the same call works once memory is free again (checked against the
CPU). Prints "recovered" on success."""

import torch

import gsparse
from gsparse._native import launch_arg, tensor_arg


def main():
    gen = torch.Generator().manual_seed(3)
    n, e = 100_000, 8_000_000  # device copies of about 33 MB
    ei = torch.randint(0, n, (2, e), generator=gen)
    x_cpu = torch.rand(n, 8, generator=gen)
    x = x_cpu.cuda()
    # The GPU runtime set up on a small graph; then the first call on the big one must make its
    # device copies on the full device (not after a warm-up on a graph of its size: Halide keeps
    # freed device blocks for reuse, which would leave exactly the blocks this one needs).
    small = gsparse.Graph(torch.randint(0, 300, (2, 4000), generator=gen), num_nodes=300)
    gsparse.gspmm(small, "copy_lhs", "sum", torch.rand(300, 8, device="cuda"))
    g = gsparse.Graph(ei, num_nodes=n, dynamic=False)
    out = torch.empty(n, 8, device="cuda")  # the output, allocated before the device is filled
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free_before, _ = torch.cuda.mem_get_info()
    filler = []  # blocks of 16 MB (PyTorch allocates them exactly) until the device is full
    try:
        while True:
            filler.append(torch.empty(16 << 20, dtype=torch.uint8, device="cuda"))
    except torch.cuda.OutOfMemoryError:
        pass
    try:
        gsparse._C.gspmm(g._g, "copy_lhs", "sum", tensor_arg(x, "lhs"), None, tensor_arg(out, "out"), None, None,
                         launch_arg(x.device), None)
    except gsparse.KernelError as err:
        message = str(err)
    else:
        raise AssertionError("g-SpMM on a full device did not raise")
    finally:
        filler.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    assert "out of GPU memory" in message or "OUT_OF_MEMORY" in message, message
    free_after, _ = torch.cuda.mem_get_info()
    assert free_after >= free_before - (1 << 20), f"the failed call kept device memory ({free_before - free_after} B)"
    got = gsparse.gspmm(g, "copy_lhs", "sum", x)
    torch.testing.assert_close(got.cpu(), gsparse.gspmm(gsparse.Graph(ei, num_nodes=n), "copy_lhs", "sum", x_cpu))
    print("error:", message)
    print("recovered")


if __name__ == "__main__":
    main()
