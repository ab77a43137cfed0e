#!/usr/bin/env bash
# Session 34, call 5 (H200, $OUT set; carried .device-bin from `ci/h200/stage.sh default` at
# this commit, .devx, .peers).
# 1. Call 4's hang with the fix: 128x128 s5 (.devx/fixrt: the fixed kernels with the tiles of
#    s34_rt.patch) at M = 128 and 256, N = 24576, K = 1536, 100 graph replays, 25 s each.
# 2. The GEMM GPU tests of the staged default build (the new back-to-back two-consumer test
#    among them).
# 3. The race of record, with BASE_BIN=.devx/rt/blockfp8 (the kernels before the fix, same
#    tiles) as race.sh's third bench: the store-warp tiles' pacing change in the same call.
set -u
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
for v in fixrt rt; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
X=.devx/fixrt/blockfp8
for m in 128 256; do
  d=$R/cfg_s5_$m; mkdir -p $d
  echo "{\"$m\": {\"BLOCK_SIZE_M\": 128, \"BLOCK_SIZE_N\": 128, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 8, \"num_warps\": 8, \"num_stages\": 5}}" > "$d/N=24576,K=1536,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
  timeout 25 $X bench --backend cuda --config-dir $d --mnk $m,24576,1536 --warmup 3 --repeats 100 --rounds 1 --no-progress --json > $R/s5_$m.json 2>&1
  echo "fixed 128x128 s5 M=$m rc=$? t=$(( $(date +%s) - t0 ))"
done
rm -rf $R/cfg_*
timeout 240 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"
grep -E "^test |test result|panicked" $R/tests.txt | head -20
left=$(( 470 - ($(date +%s) - t0) ))
mkdir -p $R/race
OUT=$R/race BASE_BIN=.devx/rt/blockfp8 DG_ISOLATED=1 DG_PASSES=2 timeout $left bash ci/h200/race.sh 2>&1 | tail -34
echo "race t=$(( $(date +%s) - t0 ))"
cd $OUT && tar czf r.tgz r && rm -rf r
