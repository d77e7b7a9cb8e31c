#!/usr/bin/env bash
# the gate's training part completed with rmat-s22; retrain; heavy-tailed held-out members again; tune --segments on CUDA
T0=$(date +%s)
source .gpu-deps/gpu-env.sh .gpu-deps
export BUILD_DIR=/tmp/b5 GSPARSE_KERNEL_CACHE=/tmp/kc
R=$OUT/r; mkdir -p $R
cmake -S . -B $BUILD_DIR -DCMAKE_BUILD_TYPE=Release -DGSPARSE_WITH_TORCH=OFF -DGSPARSE_WITH_PYTHON=OFF > $R/configure.log 2>&1
cmake --build $BUILD_DIR --target gsparse-data gsparse-bench-spmm gsparse-tune -j16 > $R/build.log 2>&1 || tail -30 $R/build.log
echo "build done $(( $(date +%s) - T0 )) s"
D=$BUILD_DIR/datasets/gsparse-data; B=$BUILD_DIR/benchmarks/gsparse-bench-spmm
GD=$BUILD_DIR/zoo-graphs; mkdir -p $GD
$D zoo gen rmat-s22 -o $GD --quiet > /dev/null
printf '{"graph": "%s", "stats": %s}\n' rmat-s22 "$($D stats $GD/rmat-s22.gcsr --json)" >> $R/graphs.jsonl
echo "train graph done $(( $(date +%s) - T0 )) s"
timeout 150 $B --graphs $GD/rmat-s22.gcsr --order shuffled --feats 1,2,4,8,16,32,64,256 --ops copy_lhs:sum \
  --runs 10 --warmup 3 --cusparse-algs CSR_ALG2 --schedules benchmarks/schedules/zoo_train_segments.json \
  --json $R/spmm-train-segments-d.json > $R/bench-train-d.log 2>&1
echo "train bench done $(( $(date +%s) - T0 )) s"
old=autotune/selector/data/h100-segment-gate-train-2026-11-26.json.gz
python3 autotune/selector/collect_segment_runs.py $R/spmm-train-segments-d.json --stats $R/graphs.jsonl --merge $old -o $R/gate-data.json.gz
cp $R/gate-data.json.gz $old
python3 autotune/selector/train_segment_gate.py $old --emit schedules/spmm_segments_gate_table.inc \
  --report $R/segment_gate_cross_validation.md > $R/train.log 2>&1
cp schedules/spmm_segments_gate_table.inc $R/
cmake --build $BUILD_DIR --target gsparse-bench-spmm gsparse-tune -j16 > $R/build3.log 2>&1 || tail -30 $R/build3.log
echo "retrained and rebuilt $(( $(date +%s) - T0 )) s"
HELD=cl-h-4m,cl-h-6m-sparse,rmat-h-s18,rmat-h-s21,bip-h-8m,bip-h-30m,products-h-s30-i05,cl-h-40m
files=""
for n in ${HELD//,/ }; do
  $D zoo gen $n -o $GD --quiet > /dev/null && files+="${files:+,}$GD/$n.gcsr"
done
$BUILD_DIR/autotune/gsparse-tune --graph $GD/cl-h-6m-sparse.gcsr --feat 4 --target cuda --segments --no-cache --json $R/tune-segments.json > $R/tune-segments.log 2>&1
echo "tune rc $? $(( $(date +%s) - T0 )) s"; tail -4 $R/tune-segments.log
left=$(( 400 - ($(date +%s) - T0) ))
timeout $left $B --graphs "$files" --order shuffled --feats 1,2,4,8,16,32 \
  --ops copy_lhs:sum,mul:sum --runs 10 --warmup 3 --schedules benchmarks/schedules/zoo_default_vs_row_default.json \
  --json $R/spmm-heldout-gate3.json > $R/bench.log 2>&1
echo "bench rc $? $(( $(date +%s) - T0 )) s"; tail -2 $R/bench.log
cd $OUT && tar czf r.tgz r && rm -rf r
