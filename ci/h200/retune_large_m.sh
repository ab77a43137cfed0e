#!/bin/bash
# Seventh session, after the 128x256 tile: re-tunes M >= 256 of every DeepSeek-V3 shape with
# the default build's `blockfp8` (two GPUs; its compiled tiles are the candidates, so no new
# tile enters the default build), then `blockfp8 bench` of the large-M anchors through the
# re-tuned files. Results land in $OUT.
B=.device-bin
BATCH=256,512,1024,1536,2048,3072,4096 TUNE_TIMEOUT=${TUNE_TIMEOUT:-240} bash $B/retune_small_m.sh
timeout 60 $B/blockfp8 bench --backend cuda --config-dir retuned_tp8 --mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 512,4096,7168 --mnk 1024,24576,1536 > $OUT/cli_bench_tp8.txt 2>&1; echo "rc=$?" >> $OUT/cli_bench_tp8.txt
grep -E "Average speedup" $OUT/cli_bench_tp8.txt
date -u >> $OUT/gpu.txt
