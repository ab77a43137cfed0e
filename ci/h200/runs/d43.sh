#!/usr/bin/env bash
# Session 17, call 3. carry [".devc", ".devx"]. exp = the staged C (128x256 s4, 128x128 s6: no room for a C buffer)
# also deferred past the next tile's first wgmmas; base = HEAD (c2ed... the TMA-C deferral). GPU tests of exp, A/B,
# then a re-tune at M = 64-128 of every H200 shape (their tiles are the same in both builds).
set -u
R=$OUT/r; mkdir -p $R; t0=$(date +%s)
tar xzf .devc/b.tgz -C .devc; B=.devc/b
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
OUT=$R T=$B/cuda-exp TEST_TIMEOUT=150 bash .devc/tests.sh; echo "tests exp $(( $(date +%s)-t0 ))s"
S="--mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 2048,4096,7168 --mnk 1024,4096,7168 --mnk 4096,18432,7168 --mnk 2048,7168,8192 --mnk 1024,7168,1024 --mnk 512,7168,2048 --mnk 1536,24576,1536 --mnk 3072,12288,7168 --mnk 4096,1024,7168 --mnk 1024,24576,7168 --mnk 512,4096,7168 --mnk 1024,2048,7168 --mnk 4096,512,7168 --mnk 256,7168,4096 --mnk 96,12288,1536 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168"
for r in 1 2 3; do
  for v in base exp; do
    timeout 100 $B/blockfp8-$v bench --backend cuda --no-progress --no-check --json --config-dir configs $S > $R/b_${v}_row-major_$r.json 2>$R/e_${v}_$r.txt
  done
  echo "round $r $(( $(date +%s) - t0 ))s"
done
left=$(( 565 - ($(date +%s) - t0) ))
timeout $left $B/blockfp8-exp tune --backend cuda --shape 1024,7168 --shape 12288,1536 --shape 12288,7168 --shape 1536,7168 --shape 16384,512 --shape 2048,7168 --shape 24576,7168 --shape 3072,1536 --shape 3072,7168 --shape 36864,7168 --shape 4096,512 --shape 4608,7168 --shape 512,7168 --shape 576,7168 --shape 6144,1536 --shape 6144,7168 --shape 7168,1024 --shape 7168,2304 --shape 7168,256 --shape 7168,4096 --shape 7168,4608 --shape 7168,512 --shape 7168,8192 --shape 7168,9216 --shape 8192,512 --shape 9216,7168 --shape 7168,16384 --shape 7168,18432 --shape 18432,7168 --shape 4096,7168 --shape 2112,7168 --shape 24576,1536 --shape 32768,512 --shape 7168,2048 --batch-size 64,96,128 --save-path $R/tune --no-progress > $R/tune.log 2>&1; echo "tune rc=$? $(( $(date +%s)-t0 ))s"
wc -l $R/tune/*.jsonl
tar czf $OUT/r.tgz -C $OUT r
