#!/usr/bin/env bash
# Session 28, call 6 (H200, $OUT set; .device-bin staged from db89242, as raced in call 4): the
# race again with a third bench of the same build and configs given column-major activation
# scales (the layout DeepGEMM takes; call 5 measured 1.014x at large M). DeepGEMM one pass
# (the device budget's end), each shape in its own process.
set -u
REAL=$OUT; export OUT=$REAL/r; mkdir -p $OUT
DG_ISOLATED=1 DG_PASSES=1 BASE_ARGS="--scale-layout column-major" bash ci/h200/race.sh
tar czf $REAL/r.tgz -C $REAL r
