#!/bin/bash
# All GPU tests, then the large-M and two M=128 anchors with the sweep (debug log lists every
# tile's time; the 128x192 and default 128x128 lines are printed), twice.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 200 $T --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL|failed" $OUT/tests.log | head -20
S=1024x4096x7168,1024x18432x7168,2048x4096x7168,4096x4096x7168,128x7168x18432,128x18432x7168
for r in 1 2; do
  date -u >> $OUT/dates.txt
  RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_SHAPES=$S BLOCKFP8_BENCH_OUT=$OUT/bench_$r.md timeout 200 $T --ignored bench --nocapture > $OUT/bench_$r.log 2>&1; echo "rc=$?" >> $OUT/bench_$r.log
  cut -d'|' -f2-4,6,9,10 $OUT/bench_$r.md | head -9
  for s in 1024x4096x7168 1024x18432x7168 2048x4096x7168 4096x4096x7168 128x7168x18432; do grep " $s " $OUT/bench_$r.log | sed 's/.*\] //' | awk -F': ' '{print $2, $1}' | sort -g | grep -E "n192|n128k128g8w8s6 split1" | head -3; done
done
date -u >> $OUT/dates.txt
