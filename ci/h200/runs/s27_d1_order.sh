#!/usr/bin/env bash
# Session 27, call 1 (H200, $OUT set): an A/B of two build-time variants of the TMA GEMM,
# staged in .devx/<variant>/{blockfp8,cuda}.xz: base (no flag), order (BLOCKFP8_WG_ORDER: the
# two consumer warpgroups take turns issuing their wgmmas), arrive (BLOCKFP8_STORE_ARRIVE: the
# store warp's C_FULL / C_FREE barriers arrived at, not synced, by the side that need not
# wait), both. The GEMM GPU tests of `both`, then 9 shapes on two-consumer tiles, interleaved,
# two rounds per variant; ab_compare.py of each over base.
set -u
R=$OUT/r; mkdir -p $R
for v in base order arrive both; do xz -d -T4 .devx/$v/*.xz; chmod +x .devx/$v/*; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
for v in both; do
  timeout 150 .devx/$v/cuda --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/${v}_tests.log 2>&1; echo "$v tests rc=$?" >> $R/${v}_tests.log
  grep -E "test result|panicked|FAILED|rc=" $R/${v}_tests.log | head -6
done
big="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 128,18432,7168"
for r in 1 2; do
  for v in base order arrive both; do
    timeout 80 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json $big > $R/${v}_$r.json 2> $R/${v}_$r.err
    echo "$r $v rc=$? $(date -u +%T)"
  done
done
for v in order arrive both; do
  echo "== $v over base"
  python3 ci/h200/ab_compare.py $R/base_1.json,$R/base_2.json $R/${v}_1.json,$R/${v}_2.json | tee $R/ab_$v.md | grep -E "tuned|geomean|Geometric"
done
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r
