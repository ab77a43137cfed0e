#!/bin/bash
# Re-tunes M <= 128 (or the batch sizes in $BATCH) of every DeepSeek-V3 weight shape (tp 8 and
# tp 1) after a kernel change (two GPUs, one worker each); the new entries replace those of
# configs/ (ci/h200/README.md). Results land in $OUT.
set -u
B=.device-bin
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
for tp in 8 1; do
  t0=$(date +%s)
  timeout ${TUNE_TIMEOUT:-150} $B/blockfp8 tune --backend cuda --model deepseek-v3 --tp-size $tp --batch-size ${BATCH:-1,2,4,8,16,24,32,48,64,96,128} --devices 0,1 --save-path retuned_tp$tp --no-progress > $OUT/tune_tp$tp.log 2>&1
  echo "rc=$? wall_s=$(( $(date +%s) - t0 ))" >> $OUT/tune_tp$tp.log
  tail -2 $OUT/tune_tp$tp.log
done
tar czf $OUT/retuned.tgz retuned_tp8 retuned_tp1
