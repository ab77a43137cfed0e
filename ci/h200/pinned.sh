#!/bin/bash
# Default build after pinning the shipped entries' K splits and moving swapped tiles back to
# "every SM streams": the split-rule and every-compiled-config tests, the anchor bench
# without the sweep (kernel default against cuBLASLt), and `blockfp8 bench` through the
# shipped configs (the pinned entries should run as measured before the rule change).
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 60 $T shipped_hopper_configs > $OUT/tests.log 2>&1; echo "rc=$?" >> $OUT/tests.log
timeout 60 $T every_compiled_config >> $OUT/tests.log 2>&1; echo "rc=$?" >> $OUT/tests.log; grep -E "test result|panicked|rc=" $OUT/tests.log
BLOCKFP8_BENCH_SWEEP=0 BLOCKFP8_BENCH_SHAPES=8x4096x7168,8x7168x18432,8x18432x7168,64x4096x7168,64x7168x18432,64x18432x7168,64x24576x1536,64x32768x512,64x7168x16384,128x4096x7168,128x7168x18432,128x18432x7168 BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 60 $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | cut -d'|' -f2-4,6,8
timeout 60 $B/blockfp8 bench --backend cuda --mnk 8,4096,7168 --mnk 8,7168,18432 --mnk 64,4096,7168 --mnk 64,7168,18432 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,4096,7168 --mnk 128,7168,18432 > $OUT/cli_bench.md 2>&1; echo "rc=$?" >> $OUT/cli_bench.md
date -u >> $OUT/dates.txt
grep -E "^\| [0-9]+ \|" $OUT/cli_bench.md | cut -d'|' -f2-5,8,10,12,13; grep "Average speedup" $OUT/cli_bench.md
