#!/usr/bin/env bash
# Session 27, call 4 (H200, $OUT set): config-only A/B on the short-K and N = 2112 shapes where
# DeepGEMM leads by 5-8%, through the staged default build (.device-bin/blockfp8, 50a8398):
# the shipped files against four config folders (.devx/cfg-A..D, from this session's
# generator in the commit message) that re-pick the tile, stages and GROUP_SIZE_M of the
# M >= 2048 entries of N=24576 K=1536, N=7168 K=2048 and N=2112 K=7168. Two interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
shapes="--mnk 2048,24576,1536 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168"
for r in 1 2; do
  for v in ship A B C D; do
    extra=""; [ $v != ship ] && extra="--config-dir .devx/cfg-$v"
    timeout 80 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json $extra $shapes > $R/${v}_$r.json 2> $R/${v}_$r.err
    echo "$r $v rc=$?"
  done
done
for v in A B C D; do
  echo "== $v over shipped"
  python3 ci/h200/ab_compare.py $R/ship_1.json,$R/ship_2.json $R/${v}_1.json,$R/${v}_2.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r
