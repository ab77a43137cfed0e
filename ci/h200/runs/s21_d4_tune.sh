#!/usr/bin/env bash
# Session 21, call 4: the tuning build of the final tree (the remote-arrival fold included) runs
# its CUDA suite, then re-tunes the few-tile K=7168 projections at M = 384 and 512 (K-split
# pairs among the candidates) and benches each through the shipped files and the new ones.
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
T=$B/cuda-full OUT=$R TEST_TIMEOUT=150 bash $B/tests.sh; pack
t0=$(date +%s)
timeout 150 $B/blockfp8-full tune --backend cuda --shape 512,7168 --shape 576,7168 --shape 1024,7168 --shape 1536,7168 --shape 2048,7168 \
    --shape 2112,7168 --shape 3072,7168 --shape 4096,7168 --shape 4608,7168 --batch-size 384,512 --devices 0 --save-path $R/tuned --no-progress > $R/tune.log 2>&1
echo "tune rc=$? $(( $(date +%s) - t0 )) s"; pack
args=()
for m in 384 512; do for n in 512 576 1024 1536 2048 2112 3072 4096 4608; do args+=(--mnk $m,$n,7168); done; done
timeout 60 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped.json 2> $R/bench_shipped.err; echo "bench shipped rc=$?"
timeout 60 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json --config-dir $R/tuned "${args[@]}" > $R/bench_tuned.json 2> $R/bench_tuned.err; echo "bench tuned rc=$?"
pack
