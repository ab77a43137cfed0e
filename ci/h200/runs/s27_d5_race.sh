#!/usr/bin/env bash
# Session 27, call 6 (H200, $OUT set), the session's last device minutes: the race of record on
# the build that ships (staged by `bash ci/h200/stage.sh default`: the L2 prefetch of the first
# stages before the dependent-launch wait, and the GROUP_SIZE_M entries of 24576x1536 /
# 7168x2048), against the build before both (50a8398's CLI, .devx/base/blockfp8.xz) as the third
# bench and DeepGEMM from the carried .peers/, one DeepGEMM pass (the budget left); then the
# GEMM GPU tests of the staged build.
set -u
REAL=$OUT; export OUT=$REAL/r; mkdir -p $OUT  # (one archive back: the tool returns few files)
xz -d -T4 .devx/base/blockfp8.xz && chmod +x .devx/base/blockfp8
DG_ISOLATED=1 DG_PASSES=1 BASE_BIN=.devx/base/blockfp8 bash ci/h200/race.sh
tar czf $REAL/r.tgz -C $REAL r
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|FAILED|rc=" $OUT/tests.log | head -6
date -u >> $OUT/gpu.txt
tar czf $REAL/r.tgz -C $REAL r
