#!/bin/bash
# The default (user) build's test binary staged as .device-bin/cuda-default: all GPU tests, then
# the two short-K M=64 anchors five times in separate processes (kernel default and cuBLASLt).
B=.device-bin
date -u > $OUT/dates.txt
timeout 200 $B/cuda-default --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL|failed" $OUT/tests.log | head
for r in 1 2 3 4 5; do
  date -u >> $OUT/dates.txt
  BLOCKFP8_BENCH_SWEEP=0 BLOCKFP8_BENCH_SHAPES=64x32768x512,64x24576x1536 BLOCKFP8_BENCH_OUT=$OUT/short_k_$r.md timeout 60 $B/cuda-default --ignored bench > /dev/null 2>&1
  grep -E "^\| 64 \|" $OUT/short_k_$r.md | cut -d'|' -f2-4,6,8,9
done
date -u >> $OUT/dates.txt
