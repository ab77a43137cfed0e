#!/usr/bin/env bash
# Session 18, call 2. carry [".devx"]. The tuner with wide tiles also in groups of 16 rows
# (default build) at the race's large-M entries; then the tuning build's tuner (every compiled
# tile) at the race's M = 64-128 entries.
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s); X=.devx
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
timeout 300 $X/blockfp8-def tune --backend cuda --no-progress --save-path $R/large --shape 24576,1536 --shape 4096,7168 --shape 7168,16384 --shape 2112,7168 --shape 7168,2048 --batch-size 4096 > $R/large.txt 2>&1
echo "large rc=$? $(( $(date +%s)-t0 ))s"; tail -25 $R/large.txt
timeout 120 $X/blockfp8-def tune --backend cuda --no-progress --save-path $R/large --shape 24576,1536 --shape 4096,7168 --batch-size 2048 > $R/large2.txt 2>&1
echo "large2 rc=$? $(( $(date +%s)-t0 ))s"; tail -8 $R/large2.txt
timeout 150 $X/blockfp8-full tune --backend cuda --no-progress --save-path $R/small --shape 4096,7168 --shape 7168,18432 --shape 7168,16384 --shape 18432,7168 --batch-size 64,128 > $R/small.txt 2>&1
echo "small rc=$? $(( $(date +%s)-t0 ))s"; tail -25 $R/small.txt
tar czf $OUT/r.tgz -C $OUT r
