#!/bin/bash
# Ninth session, one device call: (1) the 128x256 lead of the eighth session: default test
# builds of 6e4d3f1 (`base`), with opaque-epilogue-offsets.patch (`opaque`, all GPU tests
# run) and 278af9c with split-k-part-slices.patch (`slices`, where the 3% was seen), large M,
# kernel default only, 3 rounds; (2) the measured bytes floor (`floor`: 6e4d3f1 plus
# cuda/traffic_floor.cu in the bench) on the 16 anchor shapes, kernel default and cuBLASLt
# in the same run. Outputs are gathered into a few files (the device returns few).
B=.device-bin
date -u > $OUT/dates.txt
mkdir -p $OUT/wide
OUT=$OUT/wide VARIANTS="base slices opaque" TESTED="opaque" ROUNDS=3 SWEEP=0 BENCH_TIMEOUT=60 \
  SHAPES=1024x4096x7168,2048x4096x7168,4096x4096x7168,1024x18432x7168 bash $B/variants_ab.sh > $OUT/wide_summary.txt 2>&1
date -u >> $OUT/dates.txt
RUST_LOG=blockfp8=info BLOCKFP8_BENCH_SWEEP=0 BLOCKFP8_BENCH_OUT=$OUT/floor.md timeout 200 $B/floor --ignored bench --nocapture > $OUT/floor.log 2>&1
echo "floor rc=$?" >> $OUT/dates.txt
date -u >> $OUT/dates.txt
for f in $OUT/wide/bench_*.md; do echo "## $(basename $f)"; cat $f; done > $OUT/wide_tables.md
grep -E "test result|panicked|rc=|FAIL|^test " $OUT/wide/tests_opaque.log > $OUT/tests_opaque.txt
tail -5 $OUT/floor.log >> $OUT/dates.txt
rm -rf $OUT/wide $OUT/floor.log
