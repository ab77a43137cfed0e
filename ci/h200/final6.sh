#!/bin/bash
# Sixth session, after C went out through the last ring stage: all GPU tests of the tuning
# build (`.device-bin/cuda-full`, falling back to `.device-bin/cuda-fallback` if they fail),
# the anchor bench with its sweep on that build, then `blockfp8 bench` (default build) of the
# 16 anchor shapes through the shipped configs (tuned vs kernel default vs cuBLASLt).
B=.device-bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt; date -u > $OUT/dates.txt
T=$B/cuda-full
timeout 170 $T --test-threads 4 > $OUT/tests.log 2>&1; rc=$?; echo "tests rc=$rc" >> $OUT/tests.log
echo "== tests $(basename $T)"; grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head -6
if [ $rc -ne 0 ] && [ -x $B/cuda-fallback ]; then
  T=$B/cuda-fallback
  timeout 170 $T --test-threads 4 > $OUT/tests_fallback.log 2>&1; echo "tests rc=$?" >> $OUT/tests_fallback.log
  echo "== tests $(basename $T)"; grep -E "test result|panicked|rc=|FAIL" $OUT/tests_fallback.log | head -6
fi
date -u >> $OUT/dates.txt
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout ${BENCH_TIMEOUT:-150} $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench $(basename $T) rc=$?"
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | cut -d'|' -f2-4,6,8,9,10
date -u >> $OUT/dates.txt
timeout 120 $B/blockfp8 bench --backend cuda --mnk 8,4096,7168 --mnk 8,7168,18432 --mnk 8,18432,7168 --mnk 64,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,4096,7168 --mnk 128,7168,18432 --mnk 128,18432,7168 --mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 > $OUT/cli_bench.md 2>&1; echo "cli rc=$?"
grep -E "Average speedup|^\| (tuned|kernel default|vendor) " $OUT/cli_bench.md | head -8
date -u >> $OUT/dates.txt
