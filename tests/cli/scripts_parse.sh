#!/usr/bin/env bash
# Every Python script of benchmarks/ and docs/examples/ parses (most of them run only on the GPU
# host, so a syntax error would otherwise show there first). Prints OK on success.
#   scripts_parse.sh SOURCE_DIR [PYTHON]
set -euo pipefail
src=$1
py=${2:-python3}
"$py" - "$src" <<'PY'
import glob
import sys

src = sys.argv[1]
files = sorted(glob.glob(src + "/benchmarks/*.py") + glob.glob(src + "/docs/examples/*.py"))
if len(files) < 10:
    sys.exit(f"FAIL: expected the benchmark and example scripts under {src}, found {files}")
bad = []
for f in files:
    try:
        compile(open(f).read(), f, "exec")
    except SyntaxError as e:
        bad.append(f"{f}:{e.lineno}: {e.msg}")
if bad:
    sys.exit("FAIL: scripts that do not parse:\n" + "\n".join(bad))
print(f"OK: {len(files)} scripts parse")
PY
