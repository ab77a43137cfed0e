#!/bin/bash
# Tuning build with 64-row tiles in clusters of two as well: the every-compiled-config test,
# then the anchor bench with the sweep (debug log with each candidate's time).
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 100 $T every_compiled_config > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log; grep -E "test result|panicked|rc=" $OUT/tests.log
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 120 $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
date -u >> $OUT/dates.txt
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | head -16 | cut -d'|' -f2-4,6,8,9,10
