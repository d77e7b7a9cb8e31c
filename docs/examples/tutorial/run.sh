#!/usr/bin/env bash
# The steps of docs/tutorial.md in order, run by ctest (docs.tutorial): list the plugin's programs,
# search its schedule on Cora with gsparse-tune, emit the program at the best point with
# gsparse-compile, build the application against the library and run it (it checks itself against
# a plain loop), then call the program from Python against PyTorch when the package is built.
#   run.sh GSPARSE_COMPILE GSPARSE_TUNE PLUGIN HALIDE_INCLUDE_DIR GRAPH [PYTHON PYTHONPATH]
set -euo pipefail
compile=$1 tune=$2 plugin=$3 halide_include=$4 graph=$5
python=${6:-} pythonpath=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Step 2: what the plugin holds.
"$compile" --plugin "$plugin" --list | tee "$dir/list.txt"
grep -q gated_sum "$dir/list.txt" && grep -q rows_and_vectors "$dir/list.txt"

# Step 3: search the schedule's knobs on a graph.
"$tune" --plugin "$plugin" --program gated_sum --schedule-def rows_and_vectors --graph "$graph" --feat 16 \
  --runs 3 --json "$dir/tuned.json"
best=$("${python:-python3}" -c 'import json, sys; print(json.load(open(sys.argv[1]))["best"])' "$dir/tuned.json")
echo "best point: $best"
case $best in rows_and_vectors{*) ;; *) echo "unexpected best point '$best'" >&2; exit 1 ;; esac

# Step 4: emit the program at that point as a static library.
"$compile" --plugin "$plugin" --program gated_sum --feat 16 --schedule "$best" --out "$dir/kernels" --name gated_sum
test -s "$dir/kernels/gated_sum.a" && test -s "$dir/kernels/gated_sum.h"

# Step 5: an application links it (no gsparse, no JIT) and checks it against a plain loop.
cmake -S "$here/app" -B "$dir/build" -DKERNEL_DIR="$dir/kernels" -DHALIDE_INCLUDE_DIR="$halide_include" > /dev/null
cmake --build "$dir/build" > /dev/null
"$dir/build/gated_sum_app"

# Step 6: the same program from Python, against PyTorch.
if [ -n "$python" ] && PYTHONPATH="$pythonpath" "$python" -c "import gsparse" 2> /dev/null; then
  PYTHONPATH="$pythonpath" "$python" - "$plugin" "$best" <<'PY'
import re, sys
import torch
import gsparse

plugin = gsparse.load_plugin(sys.argv[1])
point = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", sys.argv[2])}
gated_sum = plugin.program("gated_sum", features=16, schedule="rows_and_vectors", point=point)
edge_index = torch.tensor([[1, 3, 0, 2, 0, 4, 2, 2], [0, 0, 2, 2, 2, 3, 4, 4]])
g = gsparse.Graph(edge_index, num_nodes=5)
x = torch.randn(5, 16)
gate = torch.randn(8, 1)
out = gated_sum(g, x=x, gate=gate)
want = torch.zeros(5, 16).index_add(0, edge_index[1], x[edge_index[0]] * torch.sigmoid(gate))
torch.testing.assert_close(out, want)
# Training: the backward derived from the message (the program sums it).
f = gsparse.user_op(gated_sum)
x.requires_grad_()
gate.requires_grad_()
up = torch.randn(5, 16)
got = torch.autograd.grad(f(g, x=x, gate=gate), (x, gate), up)
ref = torch.zeros(5, 16).index_add(0, edge_index[1], x[edge_index[0]] * torch.sigmoid(gate))
for a, b in zip(got, torch.autograd.grad(ref, (x, gate), up)):
    torch.testing.assert_close(a, b)
print("Python: OK")
PY
else
  echo "Python step skipped: the gsparse package is not built"
fi
