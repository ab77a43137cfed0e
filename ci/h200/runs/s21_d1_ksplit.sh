#!/usr/bin/env bash
# Session 21, call 1: the tuning build with K-split pairs (c2k tiles: two CTAs split a tile's
# K range and add their sums through distributed shared memory). Its CUDA suite first, then a
# re-tune of small-M shapes with every TMA tile a candidate (the pairs included), then each
# tuned (M, N, K) benched through the shipped files and through the new ones (same binary).
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
T=$B/cuda-full OUT=$R TEST_TIMEOUT=150 bash $B/tests.sh; pack
t0=$(date +%s)
timeout 90 $B/blockfp8-full tune --backend cuda --shape 4096,7168 --batch-size 48,64,96,128,256 \
    --devices 0 --save-path $R/tuned --no-progress > $R/tune_a.log 2>&1; echo "tune_a rc=$? $(( $(date +%s) - t0 )) s"; pack
timeout 170 $B/blockfp8-full tune --backend cuda --shape 7168,18432 --shape 2112,7168 --shape 576,7168 --shape 1536,7168 --shape 7168,2048 --shape 7168,9216 \
    --batch-size 64,128 --devices 0 --save-path $R/tuned --no-progress > $R/tune_b.log 2>&1; echo "tune_b rc=$? $(( $(date +%s) - t0 )) s"; pack
args=()
for m in 48 64 96 128 256; do args+=(--mnk $m,4096,7168); done
for m in 64 128; do for w in 7168,18432 2112,7168 576,7168 1536,7168 7168,2048 7168,9216; do args+=(--mnk $m,$w); done; done
timeout 60 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped.json 2> $R/bench_shipped.err; echo "bench shipped rc=$?"
timeout 60 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json --config-dir $R/tuned "${args[@]}" > $R/bench_tuned.json 2> $R/bench_tuned.err; echo "bench tuned rc=$?"
pack
