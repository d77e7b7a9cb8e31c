#!/usr/bin/env bash
# Installs, with apt, the Debian 12 packages gsparse builds against, skipping those already present.
set -euo pipefail
pkgs=(build-essential cmake libhalide14-0-dev nlohmann-json3-dev libcli11-dev libgtest-dev libtorch-dev zlib1g-dev
      python3-dev pybind11-dev python3-torch python3-pytest python3-numpy python3-scipy)
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
