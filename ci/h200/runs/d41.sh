#!/usr/bin/env bash
# Session 17, call 1. carry [".devc", ".devx"]. The tile epilogue overlapped with the next tile's
# first wgmmas (.device-bin = new, STS.32 fragment writes), the same with stmatrix (.devb/*-stsm), against the
# committed kernels (.devb/blockfp8-base). GPU tests of both new builds, then A/B with the same config files.
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s)
tar xzf .devc/b.tgz -C .devc; B=.devc/b
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
OUT=$R T=$B/cuda-new TEST_TIMEOUT=150 bash .devc/tests.sh; echo "tests new $(( $(date +%s)-t0 ))s"
timeout 100 $B/cuda-stsm --include-ignored every_compiled_config_is_correct gemm_ragged_shapes_match_reference c_goes_out two_consumer_tiles_are_correct_over_several_tiles_per_cta bad_input_is_rejected_before_launch --test-threads 4 > $R/tests_stsm.log 2>&1; echo "tests stsm rc=$? $(( $(date +%s)-t0 ))s"
grep -E "test result|panicked" -A2 $R/tests_stsm.log | head -4
for v in new stsm; do b=$B/blockfp8-$v
  timeout 60 $b bench --backend cuda --no-progress --config-dir configs --mnk 4096,24576,1536 --mnk 2048,2112,7168 --mnk 1024,4096,7168 > $R/checked_$v.txt 2>&1; echo "checked $v rc=$?"; grep -iE "calc_diff|^\| [0-9]" $R/checked_$v.txt | head -8; done
S="--mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,2112,7168 --mnk 2048,2112,7168 --mnk 2048,4096,7168 --mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 1536,2048,7168 --mnk 512,6144,1536 --mnk 2048,24576,1536 --mnk 2048,7168,2048 --mnk 128,18432,7168"
for r in 1 2 3; do
  [ $r -gt 1 ] && [ $(( $(date +%s) - t0 )) -gt $(( 560 - 200 )) ] && break
  for v in base new stsm; do b=$B/blockfp8-$v
    timeout 100 $b bench --backend cuda --no-progress --no-check --json --config-dir configs $S > $R/b_${v}_row-major_$r.json 2>$R/e_${v}_$r.txt
  done
  echo "round $r $(( $(date +%s) - t0 ))s"
done
tar czf $OUT/r.tgz -C $OUT r
