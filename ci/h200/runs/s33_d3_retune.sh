#!/usr/bin/env bash
# Session 33, call 3 (H200, $OUT set): call 2 found 64x64 in 11 ring stages 6.9% faster than the
# shipped 8 at 128x4096x7168. Re-tune M = 64, 96, 128 and 256 of the 10 few-tile shapes at K = 7168
# (N = 512-6144; cut from 18 shapes after the device time refusals cost) with .devx/rt: the default build plus 64x64 s10 / s11,
# 64x32 s13-s15 and K-split pairs of 64x64 s10, 64x32 s13 / s14 (`git show <this
# commit>:ci/h200/runs/s33_rt.patch`), every compiled tile a candidate (the tuner checks each
# against the CPU reference). Then the new entries against the shipped files, two interleaved
# rounds of `blockfp8 bench`; entries 1% faster or more get merged here.
set -u
R=$OUT/r; mkdir -p $R
xz -d -T4 .devx/rt/blockfp8.xz; chmod +x .devx/rt/blockfp8
SH="--shape 512,7168 --shape 576,7168 --shape 1024,7168 --shape 1536,7168 --shape 2048,7168 --shape 2112,7168 --shape 3072,7168 --shape 4096,7168 --shape 4608,7168 --shape 6144,7168"
t0=$(date +%s)
timeout 220 .devx/rt/blockfp8 tune --backend cuda $SH --batch-size 64,96,128,256 --save-path $R/tuned --no-progress > $R/tune.log 2>&1
echo "tune rc=$? wall_s=$(( $(date +%s) - t0 ))"; tail -3 $R/tune.log
for r in 1 2; do
  timeout 100 .devx/rt/blockfp8 bench --backend cuda --no-progress --no-check --json $SH --batch-size 64,96,128,256 > $R/ship_$r.json 2>/dev/null; echo "$r ship rc=$?"
  timeout 100 .devx/rt/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir $R/tuned $SH --batch-size 64,96,128,256 > $R/new_$r.json 2>/dev/null; echo "$r new rc=$?"
done
python3 ci/h200/ab_compare.py $R/ship_1.json,$R/ship_2.json $R/new_1.json,$R/new_2.json > $R/ab.md; grep -E "tuned" $R/ab.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
