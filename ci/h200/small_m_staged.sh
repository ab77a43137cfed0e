#!/bin/bash
# All GPU tests, then the M <= 128 anchors (graph timing, sweep), then the two short-K M=64
# shapes again in a second process.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 170 $T --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL|failed" $OUT/tests.log | head -20
date -u >> $OUT/dates.txt
S=8x4096x7168,8x7168x18432,8x18432x7168,64x4096x7168,64x7168x18432,64x18432x7168,64x24576x1536,64x32768x512,64x7168x16384,128x4096x7168,128x7168x18432,128x18432x7168
BLOCKFP8_BENCH_SHAPES=$S BLOCKFP8_BENCH_OUT=$OUT/bench_small.md timeout 250 $T --ignored bench > $OUT/bench_small.log 2>&1; echo "bench rc=$?" >> $OUT/bench_small.log
cut -d'|' -f2-4,6,8-11 $OUT/bench_small.md | head -16
date -u >> $OUT/dates.txt
BLOCKFP8_BENCH_SHAPES=64x32768x512,64x24576x1536 BLOCKFP8_BENCH_OUT=$OUT/bench_short_k.md timeout 60 $T --ignored bench > $OUT/bench_short_k.log 2>&1
cut -d'|' -f2-4,6,8-11 $OUT/bench_short_k.md | head -6
date -u >> $OUT/dates.txt
