#!/bin/bash
# Clusters of two against single CTAs in one process: a default build with the 128x128 c2
# tile added to the default set (staged as .device-bin/cuda-c2): all GPU tests, then the
# large-M anchors twice, with the sweep's per-config times (debug log).
B=.device-bin
timeout 200 $B/cuda-c2 --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL|assert" $OUT/tests.log | head -20
S=1024x4096x7168,1024x18432x7168,2048x4096x7168,4096x4096x7168
for r in 1 2; do
  RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_SHAPES=$S BLOCKFP8_BENCH_OUT=$OUT/bench_$r.md timeout 120 $B/cuda-c2 --ignored bench --nocapture > $OUT/bench_$r.log 2>&1
  echo "== round $r rc=$?"; grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench_$r.md | cut -d'|' -f2-4,6,8,9,10
  grep -E "m128n128k128g8w8s6(c2)? split1" $OUT/bench_$r.log | sed 's/.*\] //' | head -20
done
grep -h "clusters of" $OUT/bench_1.log | head -3
