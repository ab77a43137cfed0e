#!/bin/bash
# Eighth session, second split-K build (`splitk2`: one acquire-release atomic per CTA instead
# of a __threadfence in every thread): its split-K tests, then an A/B against `base` on the
# shapes that split or that run many swapped tiles per SM (sweep, two rounds).
# (Never run: the session's device time ran out before it.)
B=.device-bin
date -u > $OUT/dates.txt
timeout 90 $B/splitk2 split_k_relaunches every_compiled_config --test-threads 2 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head -8
mkdir -p $OUT/ab && OUT=$OUT/ab VARIANTS="base splitk2" TESTED="" ROUNDS=2 SWEEP=1 BENCH_TIMEOUT=45 \
  SHAPES=8x4096x7168,64x4096x7168,8x7168x18432,8x18432x7168,64x18432x7168,128x7168x18432 bash $B/variants_ab.sh
rm -f $OUT/ab/*.log
