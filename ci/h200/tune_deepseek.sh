#!/bin/bash
# DeepSeek-V3 tuning at tp 8 and tp 1 (one worker per GPU), then the anchor shapes benched
# with the tuned files. Everything lands in $OUT.
set -u
B=.device-bin
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
for tp in 8 1; do
  t0=$(date +%s); timeout 200 $B/blockfp8 tune --backend cuda --model deepseek-v3 --tp-size $tp --devices 0,1 --save-path tp$tp --no-progress > $OUT/tune_tp$tp.log 2>&1; echo "rc=$? wall_s=$(( $(date +%s) - t0 ))" >> $OUT/tune_tp$tp.log
  tail -4 $OUT/tune_tp$tp.log
done
mkdir -p tuned; cp tp1/*.json tuned/ 2>/dev/null; cp tp8/*.json tuned/ 2>/dev/null; ls tuned | wc -l
tar czf $OUT/tuned.tgz tp8 tp1
timeout 110 $B/blockfp8 bench --backend cuda --config-dir tuned --mnk 8,4096,7168 --mnk 8,7168,18432 --mnk 8,18432,7168 --mnk 64,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,4096,7168 --mnk 128,7168,18432 --mnk 128,18432,7168 --mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --no-check > $OUT/bench_tuned.md 2>&1; echo "rc=$?" >> $OUT/bench_tuned.md
tail -45 $OUT/bench_tuned.md
