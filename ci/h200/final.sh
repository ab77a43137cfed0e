#!/bin/bash
# Smoke + ncu + all GPU tests + anchor bench (checks_and_bench.sh), the sweep's per-config
# times (debug log), then `blockfp8 bench` through the shipped configs.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
bash $B/checks_and_bench.sh
date -u >> $OUT/gpu.txt
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench_debug.md timeout 150 $T --ignored bench --nocapture > $OUT/bench_debug.log 2>&1; echo "rc=$?" >> $OUT/bench_debug.log
date -u >> $OUT/gpu.txt
timeout 150 $B/blockfp8 bench --backend cuda --mnk 8,4096,7168 --mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 8,7168,18432 --mnk 64,7168,18432 --mnk 128,7168,18432 --mnk 1024,4096,7168 --mnk 4096,4096,7168 > $OUT/cli_bench.txt 2>&1; echo "rc=$?" >> $OUT/cli_bench.txt
date -u >> $OUT/gpu.txt
cat $OUT/sass_default_qgmma_count.txt; grep -E "LDL|STL" $OUT/sass_summary.txt | head; tail -12 $OUT/cli_bench.txt
