#!/bin/bash
# Eighth session, split K without atomics (each part writes its own slice, the last part of a
# tile sums them): all GPU tests of the tuning build (`.device-bin/cuda-full`), an A/B of the
# default builds before (`base`) and after (`splitk`) on the 12 M <= 128 anchor shapes and one
# unsplit large shape (sweep, two rounds), then the anchor table on the tuning build.
B=.device-bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt; date -u > $OUT/dates.txt
timeout 150 $B/cuda-full --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head -8
SMALL=8x4096x7168,8x7168x18432,8x18432x7168,64x4096x7168,64x7168x18432,64x18432x7168,64x24576x1536,64x32768x512,64x7168x16384,128x4096x7168,128x7168x18432,128x18432x7168
mkdir -p $OUT/ab && OUT=$OUT/ab VARIANTS="base splitk" TESTED="" ROUNDS=2 SWEEP=1 BENCH_TIMEOUT=60 \
  SHAPES=$SMALL,1024x4096x7168 bash $B/variants_ab.sh
date -u >> $OUT/dates.txt
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 150 $B/cuda-full --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | cut -d'|' -f2-4,6,8,9,10
date -u >> $OUT/dates.txt
