#!/usr/bin/env bash
# Session 28, call 4 (H200, $OUT set): the race of record on the build that ships (the store
# warp's stores after the next tile's first block is released), staged by
# `bash ci/h200/stage.sh default` in .device-bin/, against the build before it (eac6e31's CLI,
# kernels of 14239a9: .devx/head/blockfp8.xz) as the third bench and DeepGEMM from the carried
# .peers/; then the GEMM GPU tests of the staged build.
set -u
REAL=$OUT; export OUT=$REAL/r; mkdir -p $OUT  # (one archive back: the tool returns few files)
xz -d -T4 .devx/head/blockfp8.xz && chmod +x .devx/head/blockfp8
DG_ISOLATED=1 DG_PASSES=2 BASE_BIN=.devx/head/blockfp8 bash ci/h200/race.sh
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|FAILED|rc=" $OUT/tests.log | head -6
date -u >> $OUT/gpu.txt
tar czf $REAL/r.tgz -C $REAL r
