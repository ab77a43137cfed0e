#!/usr/bin/env bash
# Session 24, call 1 (H200, $OUT set; .device-bin from `bash ci/h200/stage.sh default`, .devx the
# BLOCKFP8_A_REGS=1 build's CLI and cuda test binary, .peers carried): the 128x256 tiles with
# their A slice from registers (ldmatrix once per K block, both waves' wgmmas read it) checked
# on the GPU, then benched against the shipped build on the large-M race shapes (interleaved,
# best of rounds), with the SM clock and power sampled; then the race of record of the
# shipped build.
set -u
B=.device-bin; X=.devx
here=$(cd "$(dirname "$0")" && pwd)
R=$OUT/r; mkdir -p $R
date -u > $R/dates.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > $R/smi.csv 2>&1 &
smi=$!
timeout 240 $X/cuda-x --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config > $R/x_tests.log 2>&1; echo "x tests rc=$?" >> $R/x_tests.log
grep -E "test result|panicked|FAILED|rc=" $R/x_tests.log | head -8
date -u >> $R/dates.txt
big="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 1024,18432,7168"
for r in 1 2; do
  for v in base x; do
    bin=$B/blockfp8; [ $v = x ] && bin=$X/blockfp8
    echo "$v round $r $(date -u +%T)" >> $R/dates.txt
    timeout 150 $bin bench --backend cuda --no-progress --no-check --json $big > $R/ab_${v}_$r.json 2> $R/ab_${v}_$r.err
  done
done
python3 $here/ab_compare.py $R/ab_base_1.json,$R/ab_base_2.json $R/ab_x_1.json,$R/ab_x_2.json | tee $R/ab.md
date -u >> $R/dates.txt
OUT=$R timeout 330 bash $B/race.sh > $R/race_run.log 2>&1; echo "race rc=$?"; tail -4 $R/race_run.log
date -u >> $R/dates.txt
kill $smi
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
