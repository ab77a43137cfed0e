#!/usr/bin/env bash
# Session 18, call 1. carry [".devx"]. CTA pairs with the deferred C store (exp build: DEFER for
# CL = 2, c2 tiles 128x256 s3/s4 and 128x192 s4 compiled), their GPU tests; then A/B of config
# variants on large-M shapes: GROUP_SIZE_M 4/16, pairs (g8 = 16 M tiles a group, g4 = 8).
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s); X=.devx
tar xzf $X/b.tgz -C $X
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
timeout 170 $X/cuda-exp --include-ignored every_compiled_config_is_correct two_consumer_tiles_are_correct_over_several_tiles_per_cta c_goes_out gemm_ragged_shapes_match_reference bad_input_is_rejected_before_launch --test-threads 4 > $R/tests.log 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; grep -E "test result|panicked|FAILED" $R/tests.log | head -6
python3 $X/cfgvar.py configs /tmp/v/g16 1024 GROUP_SIZE_M=16
python3 $X/cfgvar.py configs /tmp/v/g4 1024 GROUP_SIZE_M=4
python3 $X/cfgvar.py configs /tmp/v/c2 1024 cluster=2
python3 $X/cfgvar.py configs /tmp/v/c2g4 1024 cluster=2 GROUP_SIZE_M=4
python3 $X/cfgvar.py configs /tmp/v/s3 1024 only_bn=256 num_stages=3
cp -r configs /tmp/v/base
b=$X/blockfp8-exp
timeout 90 $b bench --backend cuda --no-progress --config-dir /tmp/v/c2 --mnk 4096,24576,1536 --mnk 2100,2400,1280 --mnk 4096,4096,7168 > $R/checked_c2.txt 2>&1; echo "checked c2 rc=$?"; grep -E "^\| [0-9]" $R/checked_c2.txt | head -12
S="--mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,2112,7168 --mnk 2048,4096,7168 --mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,24576,1536 --mnk 2048,7168,2048"
for r in 1 2 3; do
  [ $r -gt 1 ] && [ $(( $(date +%s) - t0 )) -gt 400 ] && break
  for v in base g16 g4 c2 c2g4 s3; do
    timeout 100 $b bench --backend cuda --no-progress --no-check --json --config-dir /tmp/v/$v $S > $R/b_${v}_$r.json 2>$R/e_${v}_$r.txt
  done
  echo "round $r $(( $(date +%s) - t0 ))s"
done
python3 $X/ab.py $R base,g16,g4,c2,c2g4,s3 | tee $R/ab.md
tar czf $OUT/r.tgz -C $OUT r
