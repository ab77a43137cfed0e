#!/usr/bin/env bash
# Session 26, call 3 (H200, $OUT set): the race of record on the build that ships (the producer
# warpgroup's warp 2 issues the C stores of 128x192 / 128x256 s3, not of 128x144: call 2 had it
# 4% slower there), staged by `bash ci/h200/stage.sh default` in .device-bin/, against the build
# before the change (8a631b5's default build, .devx/base/blockfp8.xz) as the third bench and
# DeepGEMM from the carried .peers/. Then the GEMM GPU tests of the staged build.
set -u
REAL=$OUT; export OUT=$REAL/r; mkdir -p $OUT  # (one archive back: the tool returns few files)
xz -d -T4 .devx/base/blockfp8.xz && chmod +x .devx/base/blockfp8
DG_ISOLATED=1 DG_PASSES=2 BASE_BIN=.devx/base/blockfp8 bash ci/h200/race.sh
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|FAILED|rc=" $OUT/tests.log | head -6
date -u >> $OUT/gpu.txt
tar czf $REAL/r.tgz -C $REAL r
