#!/usr/bin/env bash
# Installs, with apt, the Debian 12 packages gsparse builds against, skipping those already present;
# then torch_geometric from PyPI (without its dependencies, which come from apt) into
# build/python-deps, for the tests that check gsparse's layers against PyG's
# (python/tests/test_pyg_parity.py). Without network access that step is left out with a warning:
# those tests are then skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake libhalide14-0-dev nlohmann-json3-dev libcli11-dev libgtest-dev libtorch-dev zlib1g-dev
      python3-dev pybind11-dev python3-torch python3-pytest python3-numpy python3-scipy
      python3-pip python3-jinja2 python3-tqdm python3-xxhash python3-aiohttp python3-fsspec)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
pyg_version=2.8.1
pyg_dir=build/python-deps
if ! PYTHONPATH=$pyg_dir /usr/bin/python3 -c "import torch_geometric" 2>/dev/null; then
  echo "installing torch_geometric $pyg_version into $pyg_dir (PyPI)"
  mkdir -p "$pyg_dir"
  /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-deps --no-compile --target "$pyg_dir" \
    "torch_geometric==$pyg_version" 2>&1 | grep -v "Running pip as the 'root' user" || true
  PYTHONPATH=$pyg_dir /usr/bin/python3 -c "import torch_geometric" 2>/dev/null ||
    echo "warning: torch_geometric could not be installed; the PyG parity tests will be skipped" >&2
fi
