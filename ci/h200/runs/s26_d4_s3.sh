#!/usr/bin/env bash
# Session 26, call 4 (H200, $OUT set; the session's last 4 minutes of device time): with the
# store warp (d956698), are the K = 7168 / 16384 entries at M = 1024-4096 faster on 128x256 s3
# (C buffer, TMA stores by the store warp) than on the shipped s4 (C staged through the ring)?
# .devx/blockfp8.xz: d956698's CLI; .devx/cfg-s3: the shipped H200 files with those 6 entries at
# 3 stages. Two interleaved rounds, each JSON written as it ends.
set -u
xz -d .devx/blockfp8.xz && chmod +x .devx/blockfp8
s="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384"
for r in 1 2; do
  timeout 40 .devx/blockfp8 bench --backend cuda --no-progress --no-check --json $s > $OUT/s4_$r.json 2> /dev/null
  timeout 40 .devx/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir .devx/cfg-s3 $s > $OUT/s3_$r.json 2> /dev/null
done
python3 ci/h200/ab_compare.py $OUT/s4_1.json,$OUT/s4_2.json $OUT/s3_1.json,$OUT/s3_2.json | grep -E "tuned|geomean"
