#!/usr/bin/env python3
"""Runs the CUDA tests of the gsparse package (pytest -m cuda). Exits with 77, which ctest reports
as skipped, when PyTorch sees no CUDA device."""

import os
import sys

import pytest
import torch

if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("no CUDA device: the CUDA tests of the gsparse package are skipped")
        sys.exit(77)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-m", "cuda", here] + sys.argv[1:]))
