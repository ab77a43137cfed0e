#!/usr/bin/env bash
# Session 24, call 10 (H200, $OUT set; .device-bin/blockfp8 the shipped build, .devx the
# BLOCKFP8_C_BY_PRODUCER=1 build's CLI and cuda test binary): the two-consumer tiles' C stores
# issued by warp 2 of the producer warpgroup instead of the consumer warps (call 9: the consumers'
# TMA-store loops held 3.7% of the stall samples at 4096x24576x1536). GEMM GPU tests of the
# variant, then the 7 large-M race shapes, interleaved, two rounds each.
set -u
R=$OUT/r; mkdir -p $R
timeout 120 .devx/cuda-x --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/x_tests.log 2>&1; echo "x tests rc=$?" >> $R/x_tests.log
grep -E "test result|panicked|FAILED|rc=" $R/x_tests.log | head -6
big="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168"
for r in 1 2; do
  timeout 60 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json $big > $R/base_$r.json 2> $R/base_$r.err
  timeout 60 .devx/blockfp8 bench --backend cuda --no-progress --no-check --json $big > $R/x_$r.json 2> $R/x_$r.err
done
python3 .device-bin/ab_compare.py $R/base_1.json,$R/base_2.json $R/x_1.json,$R/x_2.json | tee $R/ab.md | grep -E "tuned|geomean"
tar czf $OUT/r.tgz -C $OUT r
