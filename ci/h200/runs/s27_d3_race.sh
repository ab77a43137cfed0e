#!/usr/bin/env bash
# Session 27, call 3 (H200, $OUT set): the race of record on the build that ships (the staged C
# store by stmatrix), staged by `bash ci/h200/stage.sh default` in .device-bin/, against the
# build before it (551c388's default build, .devx/base/blockfp8.xz) as the third bench and
# DeepGEMM from the carried .peers/. Then the GEMM GPU tests of the staged build. Then a
# diagnostic: SM clock and power (nvidia-smi every 50 ms) through long runs of one shape each,
# the crate's `blockfp8 bench` (bf16 cuBLASLt first, then the tuned path, the kernel default and
# cuBLASLt) and DeepGEMM in an eager loop (s27_power.py), at 4096x4096x7168 and 4096x24576x1536.
set -u
REAL=$OUT; export OUT=$REAL/r; mkdir -p $OUT  # (one archive back: the tool returns few files)
xz -d -T4 .devx/base/blockfp8.xz && chmod +x .devx/base/blockfp8
DG_ISOLATED=1 DG_PASSES=2 BASE_BIN=.devx/base/blockfp8 bash ci/h200/race.sh
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|FAILED|rc=" $OUT/tests.log | head -6
# Power diagnostic (DeepGEMM's build from race.sh is in /tmp/dgb/dg).
stamp() { echo "$1 $2 $(date +"%Y/%m/%d %H:%M:%S.%3N")" >> $OUT/phases.log; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 50 > $OUT/power.csv 2>&1 &
smi=$!
sleep 2
for s in 4096,4096,7168:2500 4096,24576,1536:1500; do
  mnk=${s%%:*}; it=${s##*:}
  stamp start ours_$mnk; timeout 60 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json --rounds 1 --repeats $it --mnk $mnk > $OUT/power_ours_$mnk.json 2>/dev/null; stamp end ours_$mnk
  sleep 3
  stamp start dg_$mnk; PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} timeout 60 python3 ci/h200/runs/s27_power.py $mnk $it >> $OUT/power_dg.log 2>&1; stamp end dg_$mnk
  sleep 3
done
kill $smi
cat $OUT/power_dg.log
python3 ci/h200/runs/s27_power_summary.py $OUT/power.csv $OUT/phases.log | tee $OUT/power_summary.txt
date -u >> $OUT/gpu.txt
tar czf $REAL/r.tgz -C $REAL r
