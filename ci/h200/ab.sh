#!/bin/bash
# A/B of test-binary builds staged as .device-bin/cuda-<variant> (e.g. built with a patch from
# ci/h200/experiments/ or different BLOCKFP8_NVCC_FLAGS): all GPU tests with each variant but
# the first, then the bench on $SHAPES with each variant in turn, over $ROUNDS rounds (so
# clock and thermal drift hit every variant alike).
# SKIP_TESTS=1 skips the tests (diagnostic builds that compute wrong results on purpose).
# Usage: VARIANTS="base twoacc" SHAPES=1024x4096x7168,... bash ab.sh
B=.device-bin
ROUNDS=${ROUNDS:-2}
SHAPES=${SHAPES:-1024x4096x7168,1024x18432x7168,2048x4096x7168,4096x4096x7168,128x7168x18432,64x18432x7168}
set -- $VARIANTS
first=$1
date -u > $OUT/dates.txt
for v in $VARIANTS; do
  [ "$v" = "$first" ] || [ -n "$SKIP_TESTS" ] && continue
  timeout 150 $B/cuda-$v --test-threads 4 > $OUT/tests_$v.log 2>&1; echo "tests rc=$?" >> $OUT/tests_$v.log
  echo "== tests $v"; grep -E "test result|panicked|rc=|FAIL" $OUT/tests_$v.log | head
done
for r in $(seq 1 $ROUNDS); do for v in $VARIANTS; do
  date -u >> $OUT/dates.txt
  RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_SHAPES=$SHAPES BLOCKFP8_BENCH_OUT=$OUT/bench_${v}_$r.md timeout ${BENCH_TIMEOUT:-120} $B/cuda-$v --ignored bench --nocapture > $OUT/bench_${v}_$r.log 2>&1
  echo "== $v round $r rc=$?"; grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench_${v}_$r.md | cut -d'|' -f2-4,6,8,9,10
done; done
date -u >> $OUT/dates.txt
