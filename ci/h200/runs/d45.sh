#!/usr/bin/env bash
# Session 17, call 5: re-tune of the short-K shapes at M = 1024-4096 on the final kernels (the deferred C store
# gained most there). carry [".device-bin", ".devx"]
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s)
timeout 290 .device-bin/blockfp8 tune --backend cuda --shape 24576,1536 --shape 12288,1536 --shape 7168,2048 --shape 7168,2304 --shape 7168,1024 --shape 6144,1536 --shape 3072,1536 --shape 32768,512 --shape 16384,512 --shape 8192,512 --shape 7168,512 --shape 4096,512 --shape 7168,256 --batch-size 1024,2048,4096,1536,3072 --save-path $R/tune --no-progress > $R/tune.log 2>&1; echo "tune rc=$? $(( $(date +%s)-t0 ))s"
wc -l $R/tune/*.jsonl
tar czf $OUT/r.tgz -C $OUT r
