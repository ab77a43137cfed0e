#!/bin/bash
# A/B of two tuning builds of the test binary (.device-bin/cuda-ordered, .device-bin/cuda-free,
# e.g. built with different BLOCKFP8_NVCC_FLAGS=-D...): all GPU tests with the first, then the
# large-M anchors with the sweep, alternating over two rounds.
B=.device-bin
date -u > $OUT/dates.txt
timeout 150 $B/cuda-ordered --test-threads 4 > $OUT/tests_ordered.log 2>&1; echo "tests rc=$?" >> $OUT/tests_ordered.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests_ordered.log | head
S=1024x4096x7168,1024x18432x7168,2048x4096x7168,4096x4096x7168
for r in 1 2; do for v in ordered free; do
  date -u >> $OUT/dates.txt
  RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_SHAPES=$S BLOCKFP8_BENCH_OUT=$OUT/bench_${v}_$r.md timeout 60 $B/cuda-$v --ignored bench --nocapture > $OUT/bench_${v}_$r.log 2>&1
  echo "== $v round $r"; grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench_${v}_$r.md | cut -d'|' -f2-4,6,8,9,10
  for s in 1024x18432x7168 4096x4096x7168; do grep " $s " $OUT/bench_${v}_$r.log | sed 's/.*\] //' | grep -E "m128n192k128g8w8s5 split1|m128n128k128g8w8s6 split1"; done
done; done
date -u >> $OUT/dates.txt
