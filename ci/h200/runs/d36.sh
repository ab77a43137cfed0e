#!/usr/bin/env bash
# Prepared in session 15 for the next session; carry [".devb", ".devx"]. Three things in one call:
#  1. every_compiled_config_is_correct with fp16 on the one-consumer tiles (daebfe0, not yet GPU-run) comes with the JB / RU
#     test binaries (built after it; their one-consumer kernels are the committed ones).
#  2. .devb/*-c2 (63c0f33 + c2 pairs of 128x144 s5, 128x192 s4, 128x256 s3/s4 compiled): GPU tests, then A/B of the same
#     binary with the shipped configs ("base") against .devx/c2cfg (the same entries with "blockfp8_cluster": 2).
#  3. .devb/*-JB and *-RU (7959185 + ci/h200/experiments/k-loop-constant-stages.patch, -DBLOCKFP8_EXP_JB, and with -DBLOCKFP8_EXP_RU):
#     GPU tests, A/B against base. Compare with: python3 .devx/ab.py DIR base,c2,JB,RU
set -u
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
for v in c2 JB RU; do
  timeout 100 .devb/cuda-$v --include-ignored every_compiled_config_is_correct gemm_ragged_shapes_match_reference split_k_relaunches bad_input_is_rejected_before_launch one_consumer_tiles c_goes_out two_consumer_tiles_are_correct_over_several_tiles_per_cta --test-threads 4 > $R/tests_$v.log 2>&1; echo "tests $v rc=$? $(( $(date +%s) - t0 ))s"
  grep -E "test result|panicked" -A2 $R/tests_$v.log | head -4
done
# (the multi-tile GPU test of 4af1b44 is in the JB / RU test binaries, not in cuda-c2's)
for v in JB RU; do timeout 60 .devb/blockfp8-$v bench --backend cuda --no-progress --mnk 4096,2112,7168 --mnk 2048,2112,7168 --mnk 512,6144,1536 > $R/checked_$v.txt 2>&1; echo "checked bench $v rc=$?"; grep -E "calc_diff|^\| [0-9]" $R/checked_$v.txt | head -8; done
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 256,2048,7168 --mnk 1024,512,7168 --mnk 64,18432,7168 --mnk 1024,4096,7168 --mnk 4096,4096,7168 --mnk 2048,2112,7168 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 4096,24576,1536 --mnk 4096,7168,16384 --mnk 1024,18432,7168 --mnk 128,18432,7168 --mnk 1536,2048,7168 --mnk 512,6144,1536 --mnk 96,24576,7168"
# (About 70 s per invocation of these 17 shapes: a second round only while the call has time.)
for r in 1 2; do
  [ $r = 2 ] && [ $(( $(date +%s) - t0 )) -gt 220 ] && break
  timeout 120 .devb/blockfp8-c2 bench --backend cuda --no-progress --no-check --json $S > $R/b_base_row-major_$r.json 2>$R/e_base_$r.txt
  timeout 120 .devb/blockfp8-c2 bench --backend cuda --no-progress --no-check --json --config-dir .devx/c2cfg $S > $R/b_c2_row-major_$r.json 2>$R/e_c2_$r.txt
  timeout 120 .devb/blockfp8-JB bench --backend cuda --no-progress --no-check --json $S > $R/b_JB_row-major_$r.json 2>$R/e_JB_$r.txt
  timeout 120 .devb/blockfp8-RU bench --backend cuda --no-progress --no-check --json $S > $R/b_RU_row-major_$r.json 2>$R/e_RU_$r.txt
  echo "round $r $(( $(date +%s) - t0 ))s"
done
[ $(( $(date +%s) - t0 )) -lt 460 ] && timeout 100 .devb/blockfp8-c2 tune --backend cuda --shape 2112,7168 --shape 4096,7168 --batch-size 2048,4096 --save-path $R/tune_c2 --no-progress > $R/tune_c2.log 2>&1; echo "tune rc=$? $(( $(date +%s) - t0 ))s"
tar czf $OUT/r.tgz -C $OUT r
