#!/usr/bin/env bash
# Session 26, call 1 (H200, $OUT set): an A/B of the TMA GEMM's two build-time variants of
# 73eb6fb (source: `git show 73eb6fb:cuda/gemm_sm90_tma.cuh`), staged by this session in
# .devx/<variant>/{blockfp8,cuda-x}.xz: base (no flag), item (BLOCKFP8_ITEM_AHEAD=1), cprod
# (BLOCKFP8_C_BY_PRODUCER=1), both. The GEMM GPU tests of each non-base variant, then the 7
# large-M race shapes, interleaved, two rounds per variant; ab_compare.py of each over base.
set -u
R=$OUT/r; mkdir -p $R
for v in base item cprod both; do xz -d -T4 .devx/$v/*.xz; chmod +x .devx/$v/*; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
for v in item cprod both; do
  timeout 150 .devx/$v/cuda-x --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/${v}_tests.log 2>&1; echo "$v tests rc=$?" >> $R/${v}_tests.log
  grep -E "test result|panicked|FAILED|rc=" $R/${v}_tests.log | head -6
done
big="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168"
for r in 1 2; do
  for v in base item cprod both; do
    timeout 60 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json $big > $R/${v}_$r.json 2> $R/${v}_$r.err
  done
done
for v in item cprod both; do
  echo "== $v over base"
  python3 ci/h200/ab_compare.py $R/base_1.json,$R/base_2.json $R/${v}_1.json,$R/${v}_2.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r
