#!/usr/bin/env bash
# Session 19 A/B: one-consumer tiles releasing a stage before waiting for the next (EARLY_RELEASE build) against the shipped build.
set -u
D=.device-bin/diag; FINAL_OUT=$OUT; OUT=/tmp/r; rm -rf $OUT; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
args=(); for s in $(cat $D/ab_shapes.txt); do args+=(--mnk "$s"); done
key="128,4096,7168 96,4096,7168 64,4096,7168 64,7168,18432 64,7168,16384 256,2048,7168"
kargs=(); for s in $key; do kargs+=(--mnk "$s"); done
run() { local tag=$1 bin=$2; shift 2; timeout 240 $D/$bin bench --backend cuda --no-check --no-progress --json "$@" > $OUT/$tag.json 2> $OUT/$tag.err; echo "$tag rc=$? $(date -u +%T)"; }
# GPU correctness of the new build first: its K loop on every one-consumer tile, against the CPU reference.
timeout 200 $D/early bench --backend cuda --no-progress --json --warmup 0 --repeats 1 --rounds 1 "${kargs[@]}" --mnk 96,7168,18432 --mnk 128,576,7168 --mnk 64,1536,7168 --mnk 77,1000,1280 > $OUT/early_check.json 2> $OUT/early_check.err; echo "check rc=$?"
run b0 b0 "${args[@]}"
run early early "${args[@]}"
run b0_key b0 "${kargs[@]}"
run early_key early "${kargs[@]}"
run early_s8 early --config-dir $D/cfg8 "${kargs[@]}"
run early_s10 early --config-dir $D/cfg10 "${kargs[@]}"
run early_s11 early --config-dir $D/cfg11 "${kargs[@]}"
run early_s14 early --config-dir $D/cfg14 --mnk 64,4096,7168
run b0_key2 b0 "${kargs[@]}"
cd $OUT && tar czf $FINAL_OUT/r.tgz *
