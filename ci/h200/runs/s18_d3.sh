#!/usr/bin/env bash
# Session 18, call 3. carry [".devx"]. The tuning build's tuner (every compiled tile) at the
# small-M entries cuBLASLt holds and at M=128 of the long-K down projections; then the default
# build's tuner (wide tiles also in groups of 16 rows) at the M >= 2048 entries of 128-row wide
# tiles, M = 4096 first, as time allows.
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s); X=.devx
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
F="$X/blockfp8-full tune --backend cuda --no-progress --save-path $R/small"
timeout 100 $F --batch-size 96 --shape 12288,7168 --shape 7168,16384 --shape 7168,18432 --shape 9216,7168 > $R/s96.txt 2>&1; echo "s96 rc=$? $(( $(date +%s)-t0 ))s"
timeout 100 $F --batch-size 256 --shape 24576,1536 --shape 6144,7168 --shape 7168,16384 --shape 7168,18432 --shape 7168,2048 --shape 7168,9216 > $R/s256.txt 2>&1; echo "s256 rc=$? $(( $(date +%s)-t0 ))s"
timeout 80 $F --batch-size 128 --shape 7168,9216 --shape 7168,8192 --shape 7168,4608 --shape 7168,4096 > $R/s128.txt 2>&1; echo "s128 rc=$? $(( $(date +%s)-t0 ))s"
D="$X/blockfp8-def tune --backend cuda --no-progress --save-path $R/large"
S4096="--shape 1024,7168 --shape 12288,1536 --shape 12288,7168 --shape 1536,7168 --shape 16384,512 --shape 18432,7168 --shape 2048,7168 --shape 2112,7168 --shape 24576,7168 --shape 3072,1536 --shape 3072,7168 --shape 32768,512 --shape 36864,7168 --shape 4096,512 --shape 4608,7168 --shape 6144,1536 --shape 6144,7168 --shape 7168,1024 --shape 7168,18432 --shape 7168,2048 --shape 7168,2304 --shape 7168,256 --shape 7168,4096 --shape 7168,4608 --shape 7168,512 --shape 7168,8192 --shape 7168,9216 --shape 8192,512 --shape 9216,7168"
S2048="--shape 12288,1536 --shape 12288,7168 --shape 1536,7168 --shape 16384,512 --shape 18432,7168 --shape 2048,7168 --shape 24576,7168 --shape 3072,1536 --shape 3072,7168 --shape 32768,512 --shape 4096,512 --shape 4608,7168 --shape 6144,1536 --shape 6144,7168 --shape 7168,1024 --shape 7168,16384 --shape 7168,18432 --shape 7168,2048 --shape 7168,2304 --shape 7168,256 --shape 7168,4096 --shape 7168,4608 --shape 7168,512 --shape 7168,8192 --shape 7168,9216 --shape 8192,512 --shape 9216,7168"
left() { echo $(( 545 - ($(date +%s) - t0) )); }
timeout $(left) $D --batch-size 4096 $S4096 > $R/l4096.txt 2>&1; echo "l4096 rc=$? $(( $(date +%s)-t0 ))s"
[ $(left) -gt 30 ] && { timeout $(left) $D --batch-size 2048 $S2048 > $R/l2048.txt 2>&1; echo "l2048 rc=$? $(( $(date +%s)-t0 ))s"; }
cat $R/small/*.jsonl $R/large/*.jsonl 2>/dev/null | wc -l
for f in $R/s96.txt $R/s256.txt $R/s128.txt $R/l4096.txt; do grep -E "^ *[0-9]+ +[0-9]+ +[0-9]+ " $f | head -30; done
tar czf $OUT/r.tgz -C $OUT r
