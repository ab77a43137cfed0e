#!/bin/bash
# Ninth session, last check of what ships: all GPU tests of the default build (`cuda-default`,
# commit 4f45749), then the anchor bench without the sweep (kernel default with the M 33-128
# ring-depth rule, cuBLASLt and the measured floor in the same run).
B=.device-bin
date -u > $OUT/dates.txt
timeout 200 $B/cuda-default --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head -6
date -u >> $OUT/dates.txt
BLOCKFP8_BENCH_SWEEP=0 BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 120 $B/cuda-default --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | cut -d'|' -f2-4,6,7,9
date -u >> $OUT/dates.txt
rm -f $OUT/bench.log
