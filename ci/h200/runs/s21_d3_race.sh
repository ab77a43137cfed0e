#!/usr/bin/env bash
# Session 21, call 3: the default build with the re-tuned files (K-split pairs shipped): the race
# of record (base column through 0b6bc42's files), the device-API and CUDA suites with their GPU
# tests and the decode example, each re-tuned (M, N, K) through the shipped and the base files
# (same binary), then the Python package's install and pytest.
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/race $R/api $R/py
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
OUT=$R/race timeout 250 bash $B/race.sh > $R/race/race.log 2>&1; echo "race rc=$? $(date -u +%T)"; pack
OUT=$R/api BENCH=0 timeout 200 bash $B/device_api.sh > $R/api/summary.log 2>&1; echo "device_api rc=$? $(date -u +%T)"; pack
args=()
for s in 48,512 192,512 256,512 48,576 128,576 192,576 256,576 128,1024 192,1024 256,1024 32,1536 48,1536 64,1536 96,1536 128,1536 192,1536 256,1536 \
    48,2048 64,2048 128,2048 192,2048 32,2112 64,2112 128,2112 192,2112 48,3072 64,3072 96,3072 128,3072 192,3072 48,4096 192,4096 256,4096 48,4608 64,4608 192,4608 256,4608; do
    args+=(--mnk $s,7168); done
args+=(--mnk 64,7168,2048)
timeout 60 $B/blockfp8 bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped.json 2> $R/bench_shipped.err; echo "bench shipped rc=$?"
timeout 60 $B/blockfp8 bench --backend cuda --no-check --no-progress --json --config-dir $B/configs-base "${args[@]}" > $R/bench_base.json 2> $R/bench_base.err; echo "bench base rc=$?"
pack
OUT=$R/py STEPS="install test" timeout 150 bash $B/python_package.sh > $R/py/summary.log 2>&1; echo "python rc=$? $(date -u +%T)"; pack
