#!/usr/bin/env bash
# Session 26, call 2 (H200, $OUT set): the race of record on the build that makes the producer
# warpgroup's warp 2 issue the C stores of the two-consumer C-buffer tiles (call 1: 1.4-1.5%
# on 128x256 s3), staged by `bash ci/h200/stage.sh default` in .device-bin/, against the build
# before it (8a631b5's default build, .devx/base/blockfp8.xz) as the third bench, and DeepGEMM
# from the carried .peers/. The GEMM GPU tests of the staged build first.
set -u
xz -d -T4 .devx/base/blockfp8.xz && chmod +x .devx/base/blockfp8
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|FAILED|rc=" $OUT/tests.log | head -6
DG_ISOLATED=1 DG_PASSES=2 BASE_BIN=.devx/base/blockfp8 bash ci/h200/race.sh
date -u >> $OUT/gpu.txt
