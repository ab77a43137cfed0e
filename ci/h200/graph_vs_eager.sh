#!/bin/bash
# All GPU tests, then the anchor bench timed by graph replay (with the sweep), then the same by
# eager launches (no sweep). Tuning build staged as README.md says.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
timeout 170 $T --test-threads 4 --nocapture > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "^test |test result|panicked|rc=" $OUT/tests.log | tail -30
date -u >> $OUT/gpu.txt
BLOCKFP8_BENCH_OUT=$OUT/bench_graph.md timeout 230 $T --ignored bench --nocapture > $OUT/bench_graph.log 2>&1; echo "bench rc=$?" >> $OUT/bench_graph.log
cat $OUT/bench_graph.md || tail -20 $OUT/bench_graph.log
date -u >> $OUT/gpu.txt
BLOCKFP8_BENCH_LAUNCHES=eager BLOCKFP8_BENCH_SWEEP=0 BLOCKFP8_BENCH_OUT=$OUT/bench_eager.md timeout 120 $T --ignored bench --nocapture > $OUT/bench_eager.log 2>&1; echo "bench rc=$?" >> $OUT/bench_eager.log
cat $OUT/bench_eager.md || tail -20 $OUT/bench_eager.log
date -u >> $OUT/gpu.txt
