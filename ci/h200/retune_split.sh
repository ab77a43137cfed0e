#!/bin/bash
# Two GPUs, after the K-split rule changed: all GPU tests, the anchor bench with its sweep,
# then a re-tune of every DeepSeek-V3 weight shape (tp 8 and tp 1) at M <= 512 (where the
# rule can split K), then `blockfp8 bench` of the M <= 128 anchors with the re-tuned files
# (tuned vs default vs cuBLASLt). Results land in $OUT.
set -u
B=.device-bin; T=$(ls $B/cuda-* | head -1)
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
CUDA_VISIBLE_DEVICES=0 timeout 150 $T --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head -5
date -u >> $OUT/gpu.txt
CUDA_VISIBLE_DEVICES=0 RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout 150 $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench.md | cut -d'|' -f2-4,6,8,9,10
for tp in 8 1; do
  date -u >> $OUT/gpu.txt; t0=$(date +%s)
  timeout 170 $B/blockfp8 tune --backend cuda --model deepseek-v3 --tp-size $tp --batch-size 1,2,4,8,16,24,32,48,64,96,128,256,512 --devices 0,1 --save-path retuned_tp$tp --no-progress > $OUT/tune_tp$tp.log 2>&1
  echo "rc=$? wall_s=$(( $(date +%s) - t0 ))" >> $OUT/tune_tp$tp.log; tail -2 $OUT/tune_tp$tp.log
done
tar czf $OUT/retuned.tgz retuned_tp8 retuned_tp1
date -u >> $OUT/gpu.txt
timeout 60 $B/blockfp8 bench --backend cuda --config-dir retuned_tp8 --mnk 8,4096,7168 --mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,24576,1536 --mnk 64,32768,512 > $OUT/cli_bench_tp8.txt 2>&1; echo "rc=$?" >> $OUT/cli_bench_tp8.txt
timeout 60 $B/blockfp8 bench --backend cuda --config-dir retuned_tp1 --mnk 8,7168,18432 --mnk 8,18432,7168 --mnk 64,18432,7168 --mnk 128,18432,7168 --mnk 128,7168,18432 > $OUT/cli_bench_tp1.txt 2>&1; echo "rc=$?" >> $OUT/cli_bench_tp1.txt
date -u >> $OUT/gpu.txt
