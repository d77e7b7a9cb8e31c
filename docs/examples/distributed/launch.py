"""Starting the processes of the distributed examples: under torchrun (RANK, WORLD_SIZE and
LOCAL_RANK set) each process joins the group torchrun describes; run directly, the example spawns
--nproc processes itself on this machine. NCCL and one GPU per process when CUDA is available and
--cpu is not given; gloo on the CPU otherwise."""

import argparse
import datetime
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def arguments(description, extra=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--nproc", type=int, default=2, help="processes to spawn when not run by torchrun")
    ap.add_argument("--cpu", action="store_true", help="gloo on CPU processes even when GPUs are present")
    ap.add_argument("--graph", help="a graph file (.mtx, .gcsr); default: datasets/real/cora.mtx")
    ap.add_argument("--epochs", type=int, default=3)
    if extra:
        extra(ap)
    args = ap.parse_args()
    if args.graph is None:
        args.graph = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "datasets", "real",
                                  "cora.mtx")
    return args


def _entry(rank, world, init_method, main, args):
    use_cuda = torch.cuda.is_available() and not args.cpu
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if use_cuda else "gloo", init_method=init_method, rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=5))
    try:
        main(args, torch.device("cuda", local_rank) if use_cuda else torch.device("cpu"))
    finally:
        dist.destroy_process_group()


def launch(main, args):
    """Runs main(args, device) in every process of the job."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:   # torchrun
        _entry(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), "env://", main, args)
        return
    rendezvous = "file://" + os.path.join(tempfile.mkdtemp(prefix="gsparse-example-"), "rendezvous")
    mp.spawn(_entry, args=(args.nproc, rendezvous, main, args), nprocs=args.nproc, join=True)
