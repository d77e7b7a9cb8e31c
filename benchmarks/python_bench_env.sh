# python_bench_env.sh: what the Python benchmark scripts (run_gnn.sh, run_minibatch.sh, run_multigpu.sh)
# share, sourced by them from the repository root. Settings (environment, with defaults): BUILD_DIR
# [build-gpu], OUT [benchmarks/results], SCALE [1.0], PYTHON [python3], GRAPH_DIR [$BUILD_DIR/bench-graphs],
# JOBS [nproc], CMAKE_ARGS, SKIP_BUILD=1 (use the module and gsparse-data already built in $BUILD_DIR).
# Halide comes from .gpu-deps/gpu-env.sh where the system has none.
# shellcheck shell=bash
root=$(pwd)
BUILD_DIR=${BUILD_DIR:-build-gpu}
OUT=${OUT:-benchmarks/results}
SCALE=${SCALE:-1.0}
PYTHON=${PYTHON:-python3}
GRAPH_DIR=${GRAPH_DIR:-$BUILD_DIR/bench-graphs}
JOBS=${JOBS:-$(nproc)}
if [ -z "${HALIDE_INCLUDE_DIR:-}" ] && [ ! -f /usr/include/halide14/Halide.h ] && [ -f .gpu-deps/gpu-env.sh ]; then
  # shellcheck disable=SC1091
  source .gpu-deps/gpu-env.sh .gpu-deps
fi

# Builds the gsparse Python module and gsparse-data in $BUILD_DIR (configuring it when it has no cache).
build_python_module() {
  [ -z "${SKIP_BUILD:-}" ] || return 0
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    # shellcheck disable=SC2086
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=ON \
      -DPython3_EXECUTABLE="$(command -v "$PYTHON")" ${CMAKE_ARGS:-}
  fi
  echo "building gsparse_python and gsparse-data in $BUILD_DIR"
  cmake --build "$BUILD_DIR" --target gsparse_python gsparse-data -j"$JOBS"
}

# twin_file NAME [ORDER]: the .gcsr file of twin NAME at $SCALE (ids shuffled, or in ORDER), written
# with gsparse-data the first time; prints its path.
twin_file() {
  local name=$1 order=${2:-shuffled}
  local f=$GRAPH_DIR/$name.$order.s$SCALE.gcsr
  mkdir -p "$GRAPH_DIR"
  if [ ! -s "$f" ]; then
    echo "generating the $name twin (scale $SCALE, $order ids) into $f" >&2
    if [ "$order" = shuffled ]; then
      "$BUILD_DIR/datasets/gsparse-data" gen "$name" --scale "$SCALE" -o "$f" >&2
    else
      "$BUILD_DIR/datasets/gsparse-data" gen "$name" --scale "$SCALE" --order "$order" -o "$f" >&2
    fi
  fi
  echo "$f"
}

# run_python SCRIPT ARGS...: a benchmark script with the package sources and the built module on PYTHONPATH.
run_python() {
  local build
  case $BUILD_DIR in /*) build=$BUILD_DIR ;; *) build=$root/$BUILD_DIR ;; esac
  PYTHONPATH="$root/python:$build/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 "$PYTHON" "$@"
}
