#!/usr/bin/env bash
# Session 22, call 4 (H200): the tuning build (K-split pairs among the candidates) re-tunes the
# tp 2 / tp 4 files with few tiles per SM at small M (N = 3072 / 6144 at K = 1536, N = 7168 at
# K = 2048-4608; M = 32-256), then benches every item through the shipped files and through
# the new ones in the same call; entries at least 1% faster are merged afterwards.
set -u
B=.device-bin; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
shapes="3072,1536 6144,1536 7168,2048 7168,2304 7168,4096 7168,4608"
batch=32,48,64,96,128,256
sargs=(); for s in $shapes; do sargs+=(--shape $s); done
t0=$(date +%s)
timeout 330 $B/blockfp8-full tune --backend cuda "${sargs[@]}" --batch-size $batch --devices 0 --save-path $R/tuned --no-progress > $R/tune.log 2>&1
echo "tune rc=$? $(( $(date +%s) - t0 )) s"; pack
args=(); for s in $shapes; do for m in ${batch//,/ }; do args+=(--mnk $m,$s); done; done
for r in 1 2; do
  timeout 80 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped_$r.json 2> $R/bench_shipped_$r.err; echo "bench shipped rc=$?"
  timeout 80 $B/blockfp8-full bench --backend cuda --no-check --no-progress --json --config-dir $R/tuned "${args[@]}" > $R/bench_tuned_$r.json 2> $R/bench_tuned_$r.err; echo "bench tuned rc=$?"
done
pack
