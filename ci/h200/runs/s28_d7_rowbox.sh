#!/usr/bin/env bash
# Session 28, call 7 (H200, $OUT set): .device-bin staged from the working tree after db89242
# with the row-major activation-scale box loaded only with the blocks that start a group of 4
# K blocks (or a tile), the consumers copying their rows of it out of the stage; .devx/base the
# CLI of db89242 (every stage loads the box). The GEMM GPU tests of the staged build first, then
# two interleaved rounds of the large-M shapes (row-major scales, as the race), then one round
# of the base with column-major scales for reference, and a checked run of the new build
# on shapes whose K blocks end in a partial group of 4.
set -u
R=$OUT/r; mkdir -p $R
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/tests.log 2>&1; echo "tests rc=$?" >> $R/tests.log
grep -E "test result|panicked|FAILED|rc=" $R/tests.log | head -6
S="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 1024,18432,7168 --mnk 128,18432,7168"
for r in 1 2; do
  timeout 90 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json $S > $R/base_$r.json 2> $R/base_$r.err; echo "$r base rc=$?"
  timeout 90 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json $S > $R/new_$r.json 2> $R/new_$r.err; echo "$r new rc=$?"
done
echo "== new over base (row-major)"; python3 ci/h200/ab_compare.py $R/base_1.json,$R/base_2.json $R/new_1.json,$R/new_2.json | tee $R/ab_new.md | grep -E "tuned|geomean"
timeout 90 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/col_base.json 2> $R/col_base.err
echo "== base column-major over new row-major"; python3 ci/h200/ab_compare.py $R/new_1.json,$R/new_2.json $R/col_base.json | grep -E "tuned|geomean"
timeout 60 .device-bin/blockfp8 bench --backend cuda --no-progress --json --warmup 1 --repeats 3 --mnk 4000,7168,1920 --mnk 1000,4096,7168 --mnk 3000,24576,1536 --mnk 333,2112,7168 > $R/check.json 2> $R/check.err; echo "check rc=$?"
python3 -c "import json; d=json.load(open('$R/check.json')); print('calc_diff max', max(x.get('calc_diff') or 0 for s in d['shapes'] for x in s['measurements']))"
tar czf $OUT/r.tgz -C $OUT r
