#!/bin/bash
# Seventh session: ncu of the 128x256 and 128x128 tiles at M=N=4096 K=7168 (tuning test
# binary staged as .device-bin/cuda-full), then `blockfp8 bench` (default build, re-tuned
# configs embedded) on the 16 anchor shapes and on M=1024..4096 of shapes whose entries name
# the kernel. Results land in $OUT.
B=.device-bin
date -u > $OUT/dates.txt
timeout 200 $B/blockfp8 bench --backend cuda --mnk 8,4096,7168 --mnk 8,7168,18432 --mnk 8,18432,7168 --mnk 64,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,4096,7168 --mnk 128,7168,18432 --mnk 128,18432,7168 --mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 1024,7168,256 --mnk 4096,7168,256 --mnk 2048,4096,512 --mnk 3072,2112,7168 --mnk 1024,3072,7168 --mnk 2048,1536,7168 --mnk 512,24576,1536 --mnk 1024,32768,512 > $OUT/cli_bench.md 2>&1; echo "cli rc=$?"
grep -E "Average speedup|^\| (tuned|kernel default|vendor) " $OUT/cli_bench.md | head -8
date -u >> $OUT/dates.txt
NCU_SHAPE=4096x4096x7168 KERNELS="m128n256w8s4:w256 m128n128w8s4:base" NCU_TIMEOUT=120 bash $B/profile_ncu_wide.sh
date -u >> $OUT/dates.txt
