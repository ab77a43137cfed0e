#!/bin/bash
# (Superseded in the ninth session by lead9.sh: the slices patch no longer applies to HEAD
# and opaque-epilogue-offsets.patch was shipped.)
# For the next session (written in the eighth, not yet run): isolates the 3% the 128x256 tile
# gained under experiments/split-k-part-slices.patch (M=1024 N=4096: 47.5 against 49.0 us),
# and times the untimed acquire-release split-K build. Default builds (`cargo test --release
# --features cuda --no-run`, stripped into .device-bin/) of 46c5399 as `base`, with
# split-k-part-slices.patch as `slices`, with opaque-epilogue-offsets.patch as `opaque`, and
# with split-k-part-slices-acq-rel.patch as `acqrel`. Large M: kernel default only (SWEEP=0),
# 3 rounds; split shapes: sweep, 2 rounds.
B=.device-bin
date -u > $OUT/dates.txt
mkdir -p $OUT/wide $OUT/split
OUT=$OUT/wide VARIANTS="base slices opaque" TESTED="opaque" ROUNDS=3 SWEEP=0 BENCH_TIMEOUT=60 \
  SHAPES=1024x4096x7168,2048x4096x7168,4096x4096x7168,1024x18432x7168 bash $B/variants_ab.sh
OUT=$OUT/split VARIANTS="base acqrel" TESTED="acqrel" ROUNDS=2 SWEEP=1 BENCH_TIMEOUT=45 \
  SHAPES=8x4096x7168,64x4096x7168,8x7168x18432,64x24576x1536,128x7168x18432 bash $B/variants_ab.sh
rm -f $OUT/wide/*.log $OUT/split/*.log
