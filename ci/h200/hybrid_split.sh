#!/bin/bash
# After the K-split rule went back to "every SM streams" for swapped tiles: the split-rule
# test, the anchor bench with its sweep, and `blockfp8 bench` through the shipped configs.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 60 $T shipped_hopper_configs > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log; grep -E "test result|panicked|rc=" $OUT/tests.log
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 150 $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
date -u >> $OUT/dates.txt
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | head -12 | cut -d'|' -f2-4,6,8,9,10
timeout 100 $B/blockfp8 bench --backend cuda --mnk 8,4096,7168 --mnk 8,7168,18432 --mnk 64,4096,7168 --mnk 64,7168,18432 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,4096,7168 --mnk 128,7168,18432 --mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 > $OUT/cli_bench.md 2>&1; echo "rc=$?" >> $OUT/cli_bench.md
date -u >> $OUT/dates.txt
grep -E "^\| [0-9]+ \|" $OUT/cli_bench.md | cut -d'|' -f2-5,8,10,12,13; grep "Average speedup" $OUT/cli_bench.md
