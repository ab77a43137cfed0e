#!/usr/bin/env bash
# Session 36, call 3 (H200, $OUT set). .devx/c2d: CLI and cuda test binary of the tree with
# s36_c2defer.patch: the weight-multicast pairs (blockfp8_cluster = 2) of 128x256 s3 / s4 and
# 128x192 s4 now defer C as the unclustered tiles do (DEFER_C with the store warp, DEFER_STAGED),
# compiled beside the default build's tiles. Call 1 measured these pairs without deferral at
# 0.94-0.99x of the shipped entries. (1) GPU tests. (2) A stress of the pairs' store warp: 400
# graph replays at 256x24576x1536 (2-3 tiles per CTA, short K). (3) Same-call A/B, three
# interleaved rounds, at the large-M race shapes (and 1024x18432x7168).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
X=.devx/c2d/blockfp8
timeout 200 .devx/c2d/cuda --include-ignored --test-threads 4 every_compiled_config two_consumer_tiles gemm_anchor_shapes > $R/tests.log 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "test result|FAILED|panicked" $R/tests.log | head
F=ci/h200/force_tile.py
python3 $F $R/fc2 --tile m128n256w8s4c2 --group 16 --mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 > /dev/null
python3 $F $R/fc2 --tile m128n256w8s3c2 --group 32 --mnk 4096,24576,1536 > /dev/null
python3 $F $R/fc2 --tile m128n256w8s3c2 --group 4 --mnk 4096,7168,2048 > /dev/null
python3 $F $R/fc2 --tile m128n192w8s4c2 --group 8 --mnk 4096,2112,7168 --mnk 1024,18432,7168 > /dev/null
for t in m128n256w8s3c2 m128n192w8s4c2 m128n256w8s4c2; do
  python3 $F $R/st_$t --tile $t --group 8 --mnk 256,24576,1536 > /dev/null
  timeout 90 $X bench --backend cuda --no-progress --no-check --config-dir $R/st_$t --mnk 256,24576,1536 --repeats 400 --rounds 1 > $R/stress_$t.txt 2>&1
  echo "stress $t rc=$? t=$(( $(date +%s) - t0 ))"
done
ALL="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168"
bench() { timeout $1 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major "${@:2}"; }
for r in 1 2 3; do
  for v in ship fc2; do
    cfg=""; [ $v != ship ] && cfg="--config-dir $R/$v"
    bench 80 $cfg $ALL > $R/b_${v}_$r.json 2>$R/b_${v}_$r.err; echo "b $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
python3 ci/h200/ab_compare.py $R/b_ship_1.json,$R/b_ship_2.json,$R/b_ship_3.json $R/b_fc2_1.json,$R/b_fc2_2.json,$R/b_fc2_3.json > $R/ab_fc2.md
grep tuned $R/ab_fc2.md; grep geomean $R/ab_fc2.md
timeout 120 $X bench --backend cuda --no-progress --scale-layout column-major --config-dir $R/fc2 --mnk 4096,4096,7168 --mnk 4096,2112,7168 --rounds 1 --repeats 3 > $R/check.txt 2>&1; echo "check rc=$?"; grep -E "^\| 4096|worst" -A1 $R/check.txt | head -8
cd $OUT && tar czf r.tgz r && rm -rf r
