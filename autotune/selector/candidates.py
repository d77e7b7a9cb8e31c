#!/usr/bin/env python3
"""Structured candidate points of gpu_spmm for the candidate sweeps the default selector learns from.

    python3 autotune/selector/candidates.py --feat F -o points.json

gsparse-sweep --points measures the listed points a problem's space holds (the others are ignored)
and --sample adds a deterministic sample of the rest. The
list covers the forms that short and very uneven rows need and the hand-written defaults did not
try on them: several rows per warp with few nonzero lanes each, one row per thread, whole or split
rows, rows longest first or relabeled, and the thread-per-feature forms with shared id tiles and
row tails.
Every point is written in canonical form (kNnzTile 16 unless ids are staged).
"""
import argparse
import itertools
import json

POW2 = [1, 2, 4, 8, 16, 32]


def point(M, T, R, KT, smem, split, balance, L, V, U, tails=0):
    values = {"kMTile": M, "kNTile": T, "kNRegTile": R, "kNnzTile": KT if smem and L == 1 else 16,
              "smemColIdx": smem, "kRowSplit": split, "rowBalance": balance, "kNnzLanes": L,
              "kVecWidth": V, "kNnzUnroll": U, "kSrcTile": 0}
    if tails:  # written only when set: points of earlier sweeps (rowTails = 0) keep their text
        values["rowTails"] = 1
    return "gpu_spmm{" + ", ".join(f"{k}={v}" for k, v in sorted(values.items())) + "}"


def pow2_at_most(x):
    p = 1
    while p * 2 <= x:
        p *= 2
    return p


def lanes_family(F):
    """Rows of few nonzeros (F <= 32): M rows per block, each of T feature threads x L nonzero lanes
    (L = 1: a thread per row and feature), whole or split rows, in id order, longest first or
    relabeled."""
    if F > 32:
        return
    T = pow2_at_most(F)
    for M, L, U, split, balance in itertools.product(POW2 + [64, 128, 256], POW2, [1, 2], [0, 1024], [0, 1, 3]):
        # Lane forms put rows on the third thread dimension (at most 64 in CUDA).
        if (U > 1 and L not in (2, 4, 8)) or not 32 <= M * T * L <= 1024 or (balance == 1 and split) or \
                (L > 1 and M > 64):
            continue
        yield point(M, T, 1, 16, 0, split, balance, L, 1, U)


# (smemColIdx, kRowSplit, rowBalance, rowTails) of the thread-per-feature forms: whole rows, rows
# split into segments combined through a buffer, and the row-tail form (a row's first kRowSplit
# nonzeros with the row, the rest added atomically; sum and mean).
ROW_FORMS = [(0, 0, 0, 0), (1, 0, 0, 0), (0, 256, 0, 0), (0, 1024, 0, 0), (1, 1024, 0, 0), (1, 0, 1, 0),
             (1, 0, 2, 0), (0, 0, 3, 0), (1, 0, 3, 0), (0, 1024, 3, 0), (0, 64, 0, 1), (0, 128, 0, 1),
             (0, 256, 0, 1)]


def feature_family(F):
    """A thread per feature group (F >= 8): vector loads, register tiles, id tiles, row forms."""
    if F < 8:
        return
    top = pow2_at_most(min(F, 128))
    vmax = 4 if F % 4 == 0 else 2 if F % 2 == 0 else 1
    for M, T, (R, V), (smem, split, balance, tails) in itertools.product(
            [2, 4, 8, 32], sorted({top, top // 2}), sorted({(1, vmax), (2, vmax), (2, 1)}), ROW_FORMS):
        while T * R * V > F and T > 1:
            T //= 2
        if not 32 <= M * T <= 1024:
            continue
        yield point(M, T, R, 32, smem, split, balance, 1, V, 1, tails)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--feat", type=int, required=True, help="innermost feature length")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    points = sorted(set(lanes_family(a.feat)) | set(feature_family(a.feat)))
    with open(a.out, "w") as f:
        json.dump(points, f, indent=0)
    print(f"{len(points)} points -> {a.out}")


if __name__ == "__main__":
    main()
