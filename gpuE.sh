set -u
source .gpu-deps/gpu-env.sh .gpu-deps
t0=$SECONDS
export BUILD_DIR=/tmp/bg GSPARSE_KERNEL_CACHE=/tmp/kc
mkdir -p $OUT/cs
cmake -S . -B $BUILD_DIR -DCMAKE_BUILD_TYPE=Release -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=OFF > /tmp/cmake.log 2>&1 || { tail -30 /tmp/cmake.log; exit 1; }
cmake --build $BUILD_DIR --target test_gpu -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "build $((SECONDS-t0)) s"
timeout $((470 - (SECONDS - t0))) bash scripts/compute-sanitizer.sh $OUT/cs --build-dir $BUILD_DIR --tools memcheck \
  --filter 'GpuSpmm.GridOfSchedules:GpuSpmm.VecWidthEveryReduce:GpuSpmm.NnzLanesBreakTiesByPosition:GpuSddmm.DotEveryLaneWidth'
echo "cs rc=$? $((SECONDS-t0)) s"
tail -30 $OUT/cs/memcheck.log 2>/dev/null | grep -E "ERROR SUMMARY|OK \]|FAILED|PASSED" ; cat $OUT/cs/*summary* 2>/dev/null | head -30
