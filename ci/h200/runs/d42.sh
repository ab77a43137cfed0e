#!/usr/bin/env bash
# Session 17, call 2. carry [".devc", ".devx"]. cur = the deferred TMA-C epilogue with stmatrix on every C-buffer tile
# but 128x144 (64-row tiles included, not measured in call 1); base = the committed kernels. GPU tests of cur, A/B on
# the shapes whose configs name the 64-row tiles and 128x192 s3 plus call 1's, then a re-tune of the large-M items.
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s)
tar xzf .devc/b.tgz -C .devc; B=.devc/b
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
OUT=$R T=$B/cuda-cur TEST_TIMEOUT=150 bash .devc/tests.sh; echo "tests cur $(( $(date +%s)-t0 ))s"
S="--mnk 64,4096,7168 --mnk 128,2048,7168 --mnk 256,1024,7168 --mnk 128,12288,7168 --mnk 512,3072,1536 --mnk 2048,512,7168 --mnk 64,32768,512 --mnk 256,3072,7168 --mnk 128,7168,2304 --mnk 1536,512,7168 --mnk 64,7168,8192 --mnk 1024,512,7168 --mnk 128,4096,7168 --mnk 96,12288,7168 --mnk 512,4096,512 --mnk 2048,7168,256 --mnk 192,18432,7168 --mnk 128,24576,7168 --mnk 3072,7168,16384"
L="--mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 512,6144,1536 --mnk 2048,24576,1536 --mnk 2048,7168,2048 --mnk 1536,2048,7168"
for r in 1 2 3; do
  for v in base cur; do
    timeout 100 $B/blockfp8-$v bench --backend cuda --no-progress --no-check --json --config-dir configs $S $L > $R/b_${v}_row-major_$r.json 2>$R/e_${v}_$r.txt
  done
  echo "round $r $(( $(date +%s) - t0 ))s"
done
left=$(( 570 - ($(date +%s) - t0) ))
timeout $left $B/blockfp8-cur tune --backend cuda --shape 24576,1536 --shape 7168,2048 --shape 4096,7168 --shape 7168,16384 --shape 2112,7168 --batch-size 4096,2048 --save-path $R/tune --no-progress > $R/tune.log 2>&1; echo "tune rc=$? $(( $(date +%s)-t0 ))s"
tail -3 $R/tune.log
tar czf $OUT/r.tgz -C $OUT r
