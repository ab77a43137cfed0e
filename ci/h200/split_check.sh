#!/bin/bash
# All GPU tests of a tuning build, then the anchor bench with its sweep (debug log: every
# candidate's time with its automatic K split, then the winner at explicit splits 1-8).
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 200 $T --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head
date -u >> $OUT/dates.txt
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 300 $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
date -u >> $OUT/dates.txt
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | cut -d'|' -f2-4,6,8,9,10
