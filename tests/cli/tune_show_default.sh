#!/usr/bin/env bash
# gsparse-tune --show-default prints the schedule point an operator runs when none is given, from the
# graph's statistics, without compiling, measuring or a GPU: on the CPU it is the point the tuner
# measures as the expert default; on CUDA (no device here) a g-SpMM or g-SDDMM point that depends on
# the graph's shape and F.
set -euo pipefail
tune=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
twin=(--dataset ogbn-products --scale 0.001)

shown=$("$tune" "${twin[@]}" --feat 16 --show-default | sed -n 's/^default *//p')
[ -n "$shown" ] || { echo "no default line"; exit 1; }
measured=$("$tune" "${twin[@]}" --feat 16 --quiet --mode random --budget 1 --runs 1 --no-cache \
            --cache "$dir/cache.json" | sed -n 's/^expert *\(cpu_spmm{[^}]*}\).*/\1/p')
[ "$shown" = "$measured" ] || { echo "shown '$shown' but the tuner measured '$measured' as the default"; exit 1; }

# CUDA without a device: the point for F = 1 and F = 64 on the same graph differ, and g-SDDMM names its schedule.
f1=$("$tune" "${twin[@]}" --feat 1 --target cuda --show-default | sed -n 's/^default *//p')
f64=$("$tune" "${twin[@]}" --feat 64 --target cuda --show-default | sed -n 's/^default *//p')
[[ "$f1" =~ ^(gpu_spmm|spmm_segments)\{ ]] || { echo "F = 1 on CUDA: '$f1'"; exit 1; }
[[ "$f64" =~ ^gpu_spmm\{ ]] || { echo "F = 64 on CUDA: '$f64'"; exit 1; }
[ "$f1" != "$f64" ] || { echo "the same point at F = 1 and 64: $f1"; exit 1; }
sd=$("$tune" "${twin[@]}" --op sddmm --binary dot --feat 32 --target cuda --show-default | sed -n 's/^default *//p')
[[ "$sd" =~ ^gpu_sddmm\{ ]] || { echo "g-SDDMM on CUDA: '$sd'"; exit 1; }

# It measures nothing, so it refuses the options that write measurements.
if "$tune" "${twin[@]}" --show-default --json "$dir/r.json" > "$dir/err.txt" 2>&1; then
    echo "--show-default with --json succeeded"; exit 1
fi
grep -q "measures nothing" "$dir/err.txt" || { cat "$dir/err.txt"; exit 1; }
echo OK
