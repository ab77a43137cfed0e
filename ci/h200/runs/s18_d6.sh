#!/usr/bin/env bash
# Session 18, call 6. carry [".devx"]. The default build's tuner (wide tiles also in groups of
# 16 rows) at the M=2048 entries call 3 did not reach and at M=3072 of the 28 shapes whose entry
# there is a wide tile; none of them is a race shape.
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s); X=.devx
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
D="$X/blockfp8-def tune --backend cuda --no-progress --save-path $R/large"
left() { echo $(( 330 - ($(date +%s) - t0) )); }
timeout $(left) $D --batch-size 2048 --shape 7168,4608 --shape 7168,512 --shape 7168,8192 --shape 7168,9216 --shape 8192,512 --shape 9216,7168 > $R/l2048.txt 2>&1; echo "l2048 rc=$? $(( $(date +%s)-t0 ))s"
S3072="--shape 12288,1536 --shape 16384,512 --shape 2112,7168 --shape 24576,1536 --shape 3072,1536 --shape 32768,512 --shape 4096,512 --shape 6144,1536 --shape 7168,1024 --shape 7168,2048 --shape 7168,2304 --shape 7168,256 --shape 7168,512 --shape 8192,512 --shape 2048,7168 --shape 3072,7168 --shape 4096,7168 --shape 4608,7168 --shape 6144,7168 --shape 9216,7168 --shape 7168,4096 --shape 7168,4608 --shape 7168,8192 --shape 7168,9216 --shape 12288,7168 --shape 18432,7168 --shape 7168,18432 --shape 24576,7168"
[ $(left) -gt 20 ] && { timeout $(left) $D --batch-size 3072 $S3072 > $R/l3072.txt 2>&1; echo "l3072 rc=$? $(( $(date +%s)-t0 ))s"; }
wc -l $R/large/*.jsonl
tar czf $OUT/r.tgz -C $OUT r
