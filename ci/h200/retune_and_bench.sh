#!/bin/bash
# Two GPUs: re-tune M <= 128 (retune_small_m.sh), then `blockfp8 bench` on M <= 128 anchors
# with the re-tuned files (tuned vs default vs cuBLASLt).
B=.device-bin
TUNE_TIMEOUT=200 bash $B/retune_small_m.sh
for tp in 8 1; do grep -E "summary|entries|items|rejected|wall" $OUT/tune_tp$tp.log | tail -3; done
date -u >> $OUT/gpu.txt
timeout 120 $B/blockfp8 bench --backend cuda --config-dir retuned_tp8 --mnk 8,4096,7168 --mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,24576,1536 --mnk 64,32768,512 > $OUT/cli_bench_tp8.txt 2>&1; echo "rc=$?" >> $OUT/cli_bench_tp8.txt
timeout 120 $B/blockfp8 bench --backend cuda --config-dir retuned_tp1 --mnk 8,7168,18432 --mnk 8,18432,7168 --mnk 64,18432,7168 --mnk 128,18432,7168 --mnk 128,7168,18432 > $OUT/cli_bench_tp1.txt 2>&1; echo "rc=$?" >> $OUT/cli_bench_tp1.txt
cat $OUT/cli_bench_tp8.txt $OUT/cli_bench_tp1.txt | tail -40
date -u >> $OUT/gpu.txt
