#!/bin/bash
# Ninth session, last call: split K's workspace cleared by the conversion kernel instead of a
# memset before each split launch. A/B of default builds, `base` (HEAD before the change) and
# `clean` (with it), kernel default on the split shapes, 2 rounds; then final6.sh on the
# tuning build with the change (all GPU tests, the anchor bench with the sweep and the
# measured floor, `blockfp8 bench` through the shipped configs): the table of record.
B=.device-bin
mkdir -p $OUT/ab
OUT=$OUT/ab VARIANTS="base clean" ROUNDS=2 SWEEP=0 BENCH_TIMEOUT=40 \
  SHAPES=8x4096x7168,8x7168x18432,64x4096x7168,128x7168x18432,1024x18432x7168 bash $B/variants_ab.sh > $OUT/ab_summary.txt 2>&1
rm -rf $OUT/ab
BENCH_TIMEOUT=240 bash $B/final6.sh
rm -f $OUT/bench.log
