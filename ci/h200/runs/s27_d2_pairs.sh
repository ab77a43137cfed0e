#!/usr/bin/env bash
# Session 27, call 2 (H200, $OUT set). .devx/base: the CLI of 551c388 (as shipped); .devx/pair:
# built with -DBLOCKFP8_PAIR_DEFER (deferred C and the store warp also on CTA pairs) and
# -DBLOCKFP8_STAGED_STSM (the staged C store of 128x256 s4 / 128x128 s6 by stmatrix), its
# embedded configs .devx/cfg-c2 (the large-M 128x256 entries as s3 in multicast pairs, the
# 128x192 s4 entries in pairs), .devx/cfg-orig the shipped files of the same shapes. The GEMM
# GPU tests of the pair build (its every_compiled_config covers the pair tiles), then 9 shapes,
# three interleaved rounds: base; pair with cfg-orig (stmatrix alone); pair as built (pairs).
set -u
R=$OUT/r; mkdir -p $R
for v in base pair; do xz -d -T4 .devx/$v/*.xz; chmod +x .devx/$v/*; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
timeout 200 .devx/pair/cuda --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/pair_tests.log 2>&1; echo "pair tests rc=$?" >> $R/pair_tests.log
grep -E "test result|panicked|FAILED|rc=" $R/pair_tests.log | head -8
big="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 128,18432,7168"
for r in 1 2 3; do
  timeout 80 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json $big > $R/base_$r.json 2> $R/base_$r.err; echo "$r base rc=$?"
  timeout 80 .devx/pair/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir .devx/cfg-orig $big > $R/stsm_$r.json 2> $R/stsm_$r.err; echo "$r stsm rc=$?"
  timeout 80 .devx/pair/blockfp8 bench --backend cuda --no-progress --no-check --json $big > $R/pair_$r.json 2> $R/pair_$r.err; echo "$r pair rc=$?"
done
for v in stsm pair; do
  echo "== $v over base"
  python3 ci/h200/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r
