#!/usr/bin/env bash
# Session 20, call 1: the tuning build's GPU tests (every compiled config against the CPU
# reference, the new 12-stage tiles included), a re-tune with the tuning build's CLI
# (.device-bin/blockfp8-full: all 142 TMA tiles are candidates) of the small-M race weights,
# then the 20 race shapes through the shipped build (b0) and two producer variants
# (diag/B_FIRST: the weight tile's TMA before the activation tile's; diag/EVICT: L2 hints,
# weights evict-first, activations evict-last), interleaved.
set -u
B=.device-bin; D=$B/diag; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/tests
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
OUT=$R/tests T=$B/cuda-full TEST_TIMEOUT=170 bash $B/tests.sh; echo "tests rc=$? $(date -u +%T)"; pack
t0=$(date +%s)
timeout 300 $B/blockfp8-full tune --backend cuda --shape 7168,18432 --shape 7168,16384 --batch-size 64,128,96 --devices 0 \
    --save-path $R/tuned --no-progress > $R/tune_a.log 2>&1; echo "tune_a rc=$? $(( $(date +%s) - t0 )) s"; pack
left=$(( 330 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && timeout $left $B/blockfp8-full tune --backend cuda --shape 4096,7168 --shape 18432,7168 --batch-size 128,64 --devices 0 \
    --save-path $R/tuned --no-progress > $R/tune_b.log 2>&1; echo "tune_b rc=$? $(( $(date +%s) - t0 )) s"; pack
race="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
rargs=(); for s in $race; do rargs+=(--mnk "$s"); done
run() { local tag=$1 bin=$2; shift 2; timeout 40 $bin bench --backend cuda --no-check --no-progress --json "$@" > $R/$tag.json 2> $R/$tag.err; echo "$tag rc=$? $(date -u +%T)"; }
run race_b0 $B/blockfp8 "${rargs[@]}"
run race_bfirst $D/B_FIRST "${rargs[@]}"
run race_evict $D/EVICT "${rargs[@]}"
run race_tuned $B/blockfp8-full --config-dir $R/tuned "${rargs[@]}"
pack
