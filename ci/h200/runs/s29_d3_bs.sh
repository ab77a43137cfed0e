#!/usr/bin/env bash
# Session 29, call 3 (H200, $OUT set): on the two-consumer tiles with activation scales by TMA,
# the TMA thread copies each stage's weight scales (SB cp.async, one arrival on `full`) and the
# scale warp idles. .devx/base: the CLI of 2ee70af (the scale warp copies them, 32 arrivals).
# 1. The GEMM GPU tests. 2. A/B, three interleaved rounds, column-major scales (the race input),
# M >= 1024 race shapes and 128x18432x7168 (128x144); then two rounds with row-major scales.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 200 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 128,18432,7168"
for r in 1 2 3; do
  timeout 100 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/base_$r.json 2>/dev/null; echo "$r base rc=$?"
  timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/new_$r.json 2>/dev/null; echo "$r new rc=$?"
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "tuned|geomean"
S2="--mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048"
for r in 1 2; do
  timeout 60 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json $S2 > $R/rbase_$r.json 2>/dev/null; echo "$r rbase rc=$?"
  timeout 60 $B/blockfp8 bench --backend cuda --no-progress --no-check --json $S2 > $R/rnew_$r.json 2>/dev/null; echo "$r rnew rc=$?"
done
python3 $B/ab_compare.py $R/rbase_1.json,$R/rbase_2.json $R/rnew_1.json,$R/rnew_2.json | tee $R/ab_row.md | grep -E "tuned|geomean"
timeout 90 $B/blockfp8 bench --backend cuda --no-progress --json --warmup 1 --repeats 3 --scale-layout column-major --mnk 4000,2112,7168 --mnk 3000,7000,2000 --mnk 1000,4100,7168 > $R/check.json 2> $R/check.err; echo "check rc=$?"
python3 -c "import json; d=json.load(open('$R/check.json')); print('calc_diff max', max(x.get('calc_diff') or 0 for s in d['shapes'] for x in s['measurements']))"
tar czf $OUT/r.tgz -C $OUT r
