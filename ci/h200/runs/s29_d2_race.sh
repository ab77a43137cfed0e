#!/usr/bin/env bash
# Session 29, call 2 (H200, $OUT set), on this commit's kernels (the store warp computes each
# work item's coordinates once; ce012b2 computed the next item's twice).
# 1. The GEMM GPU tests that run the store warp (two-consumer C-buffer tiles, several tiles per CTA).
# 2. The race of record with both kernels given the same input, column-major activation scales
#    (race.sh's default CRATE_ARGS), the crate's row-major run as the third bench.
# 3. A/B of the store-warp change: .devx/prev (ce012b2's CLI) against this build, both column-major,
#    two interleaved rounds on the C-buffer tiles' shapes.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
timeout 200 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "test result" $R/tests.txt
OUT=$R DG_ISOLATED=1 DG_PASSES=2 BASE_ARGS="--scale-layout row-major" bash ci/h200/race.sh > $R/race_stdout.txt 2>&1; echo "race rc=$?"
grep -E "Geometric|rc=|failed" $R/race_stdout.txt
xz -d -T4 .devx/prev/blockfp8.xz; chmod +x .devx/prev/blockfp8
S="--mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 4096,4096,7168"
for r in 1 2; do
  timeout 80 .devx/prev/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/prev_$r.json 2>/dev/null; echo "$r prev rc=$?"
  timeout 80 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/new_$r.json 2>/dev/null; echo "$r new rc=$?"
done
python3 $B/ab_compare.py $R/prev_1.json,$R/prev_2.json $R/new_1.json,$R/new_2.json | tee $R/ab.md | grep -E "tuned|geomean"
tar czf $OUT/r.tgz -C $OUT r
