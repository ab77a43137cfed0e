#!/usr/bin/env bash
# Session 20, call 4: the tuning build's CLI of dd87d6f (.device-bin/blockfp8-full: every TMA
# tile a candidate, the decode tiles' evict-first weights included) re-tunes the long-K down
# projections at M = 64-256 and the decode entries at M = 1 and 8, then benches each tuned
# (M, N, K) through the shipped files and through the new ones (same binary, one call).
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
timeout 150 $B/blockfp8-full tune --backend cuda --shape 7168,9216 --shape 7168,8192 --shape 7168,4608 --shape 7168,4096 \
    --batch-size 64,128,256 --devices 0 --save-path $R/tuned --no-progress > $R/tune_a.log 2>&1; echo "tune_a rc=$? $(( $(date +%s) - t0 )) s"; pack
timeout 110 $B/blockfp8-full tune --backend cuda --shape 4096,7168 --shape 7168,18432 --shape 18432,7168 --shape 2112,7168 --shape 576,7168 \
    --batch-size 1,8 --devices 0 --save-path $R/tuned --no-progress > $R/tune_b.log 2>&1; echo "tune_b rc=$? $(( $(date +%s) - t0 )) s"; pack
args=()
for m in 64 128 256; do for k in 9216 8192 4608 4096; do args+=(--mnk $m,7168,$k); done; done
for m in 1 8; do for w in 4096,7168 7168,18432 18432,7168 2112,7168 576,7168; do args+=(--mnk $m,$w); done; done
timeout 70 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped.json 2> $R/bench_shipped.err; echo "bench shipped rc=$?"
timeout 70 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json --config-dir $R/tuned "${args[@]}" > $R/bench_tuned.json 2> $R/bench_tuned.err; echo "bench tuned rc=$?"
pack
