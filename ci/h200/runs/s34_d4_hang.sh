#!/usr/bin/env bash
# Session 34, call 4 (H200, $OUT set). Call 3's stall warning named the candidate call 1's tuner
# hung on: 128x128 w8 s5 (a tuning-build tile, not shipped) at M=128 N=24576 K=1536, though it
# ran alone in call 2 (bench, 1 warm-up + 3 repeats). Does the tuner hang without programmatic
# dependent launches, does the tile hang alone under many repeats, and do the shipped tiles of
# the same store-warp path (128x192 s4, 128x256 s3) hold under the same stress?
set -u
R=$OUT/r; mkdir -p $R
xz -d -T4 .devx/rtw/blockfp8.xz; chmod +x .devx/rtw/blockfp8
X=.devx/rtw/blockfp8
t0=$(date +%s)
for pdl in 0 1; do
  BLOCKFP8_PDL=$pdl timeout 40 $X tune --backend cuda --shape 24576,1536 --batch-size 128 --save-path $R/tune_pdl$pdl --no-progress --stall-warning 10 > $R/tune_pdl$pdl.log 2> $R/tune_pdl$pdl.err
  echo "tune PDL=$pdl rc=$? t=$(( $(date +%s) - t0 ))"; grep -o "candidate [a-z0-9]*, running for [0-9]* s" $R/tune_pdl$pdl.err
done
one() {  # name BM BN W S M N K [env]
  local d=$R/cfg_$1_$6_$7; mkdir -p $d
  echo "{\"$6\": {\"BLOCK_SIZE_M\": $2, \"BLOCK_SIZE_N\": $3, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 8, \"num_warps\": $4, \"num_stages\": $5}}" > "$d/N=$7,K=$8,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
  env ${9:-X=1} timeout 25 $X bench --backend cuda --config-dir $d --mnk $6,$7,$8 --warmup 3 --repeats 100 --rounds 1 --no-progress --no-check --json > $R/b_$1_$6_$7_$8.json 2>&1
  echo "$1 ${9:-} M=$6 N=$7 K=$8 rc=$? t=$(( $(date +%s) - t0 ))"
}
one s5 128 128 8 5 128 24576 1536
one s5 128 128 8 5 128 24576 1536 BLOCKFP8_PDL=0
one s5 128 128 8 5 256 24576 1536
one s5 128 128 8 5 128 7168 2048
one n192s4 128 192 8 4 128 24576 1536
one n256s3 128 256 8 3 128 24576 1536
one n192s4 128 192 8 4 256 24576 1536
one n256s3 128 256 8 3 256 24576 1536
rm -rf $R/cfg_*
cd $OUT && tar czf r.tgz r && rm -rf r
