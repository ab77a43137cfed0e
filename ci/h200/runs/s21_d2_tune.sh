#!/usr/bin/env bash
# Session 21, call 2: the tuning build of 2562c13 (K-split pairs among the candidates) re-tunes
# the K=7168 projections with few tiles at M = 32-256, then benches each tuned (M, N, K)
# through the shipped files and through the new ones (same binary, one call).
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
tune() { timeout "$1" $B/blockfp8-full tune --backend cuda "${@:3}" --devices 0 --save-path $R/tuned --no-progress > $R/tune_$2.log 2>&1; echo "tune_$2 rc=$? $(( $(date +%s) - t0 )) s"; pack; }
tune 200 a --shape 512,7168 --shape 1024,7168 --shape 2048,7168 --shape 3072,7168 --shape 4608,7168 --batch-size 48,64,96,128,192,256
tune 80 b --shape 576,7168 --shape 1536,7168 --shape 2112,7168 --batch-size 32,48,96,192,256
tune 30 c --shape 4096,7168 --batch-size 32,192
args=()
for m in 48 64 96 128 192 256; do for n in 512 1024 2048 3072 4608; do args+=(--mnk $m,$n,7168); done; done
for m in 32 48 96 192 256; do for n in 576 1536 2112; do args+=(--mnk $m,$n,7168); done; done
args+=(--mnk 32,4096,7168 --mnk 192,4096,7168)
timeout 70 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped.json 2> $R/bench_shipped.err; echo "bench shipped rc=$?"
timeout 70 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json --config-dir $R/tuned "${args[@]}" > $R/bench_tuned.json 2> $R/bench_tuned.err; echo "bench tuned rc=$?"
pack
