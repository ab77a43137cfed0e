#!/usr/bin/env bash
# Session 20, call 2: the weight tiles as evict-first L2 lines where M fits one row of tiles
# (the staged build, .device-bin/blockfp8, with the re-tuned configs) against the same configs
# without it (.device-bin/diag/b0n), in interleaved runs over the 86 one-consumer entries at
# M = 64-256, decode shapes at M = 1-32 and the 20 race shapes; then the staged build's GPU
# tests: the tuning build's CUDA suite (tests.sh, T=cuda-full) and device_api.sh (device-API
# tests, the default build's CUDA suite, the decode example).
set -u
B=.device-bin; D=$B/diag; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/full $R/dapi
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
race="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
small=""; for m in 1 4 16 32; do for w in 4096,7168 7168,18432 18432,7168 24576,1536 32768,512 7168,2048 2112,7168 576,7168; do small="$small $m,$w"; done; done
ab=$(cat $D/ab_shapes.txt)
A() { local v=(); for s in "$@"; do v+=(--mnk "$s"); done; echo "${v[@]}"; }
run() { local tag=$1 bin=$2; shift 2; timeout 100 $bin bench --backend cuda --no-check --no-progress --json "$@" > $R/$tag.json 2> $R/$tag.err; echo "$tag rc=$? $(date -u +%T)"; }
run ab_b0n $D/b0n $(A $ab)
run ab_new $B/blockfp8 $(A $ab)
run rs_b0n_1 $D/b0n $(A $race $small)
run rs_new_1 $B/blockfp8 $(A $race $small)
run rs_b0n_2 $D/b0n $(A $race $small)
run rs_new_2 $B/blockfp8 $(A $race $small)
pack
OUT=$R/full T=$B/cuda-full TEST_TIMEOUT=150 bash $B/tests.sh; echo "tests cuda-full rc=$? $(date -u +%T)"; pack
OUT=$R/dapi BENCH=0 timeout 200 bash $B/device_api.sh > $R/dapi/run.log 2>&1; echo "device_api rc=$? $(date -u +%T)"
tail -4 $R/dapi/run.log
pack
