#!/usr/bin/env bash
# Session 21, call 5: the default build with the M = 384-512 entries of call 4 (two tiles new to
# it, 128x64 s8 and 128x144 s4): its CUDA suite with the GPU tests, then each new entry's
# (M, N, K) through the shipped files and through 2efc141's (same binary).
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
OUT=$R TEST_TIMEOUT=150 bash $B/tests.sh; pack
args=()
for s in 384,512 384,1024 384,1536 384,2048 384,2112 384,3072 384,4096 384,4608 512,512 512,576 512,2048 512,2112 512,4608; do args+=(--mnk $s,7168); done
timeout 50 $B/blockfp8 bench --backend cuda --no-check --no-progress --json "${args[@]}" > $R/bench_shipped.json 2> $R/bench_shipped.err; echo "bench shipped rc=$?"
timeout 50 $B/blockfp8 bench --backend cuda --no-check --no-progress --json --config-dir $B/configs-base "${args[@]}" > $R/bench_base.json 2> $R/bench_base.err; echo "bench base rc=$?"
pack
