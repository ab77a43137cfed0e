#!/usr/bin/env bash
# Session 33, call 5 (H200, $OUT set): call 3's re-tune (the build of `git show
# f6a0750:ci/h200/runs/s33_rt.patch`, deeper one-consumer rings among the candidates) on the
# points it left that no race shape uses: N = 7168 at K = 2048-9216 with M = 64, 96, 128 and 256,
# and M = 48 and 192 of the 10 K = 7168 shapes. Then the new entries against the shipped files,
# two interleaved rounds of `blockfp8 bench`; entries 1% faster or more get merged here.
set -u
R=$OUT/r; mkdir -p $R
xz -d -T4 .devx/rt/blockfp8.xz; chmod +x .devx/rt/blockfp8
A="--shape 7168,2048 --shape 7168,2304 --shape 7168,4096 --shape 7168,4608 --shape 7168,8192 --shape 7168,9216"
B="--shape 512,7168 --shape 576,7168 --shape 1024,7168 --shape 1536,7168 --shape 2048,7168 --shape 2112,7168 --shape 3072,7168 --shape 4096,7168 --shape 4608,7168 --shape 6144,7168"
t0=$(date +%s)
timeout 100 .devx/rt/blockfp8 tune --backend cuda $A --batch-size 64,96,128,256 --save-path $R/tuned_a --no-progress > $R/tune_a.log 2>&1; echo "tune a rc=$? wall_s=$(( $(date +%s) - t0 ))"
timeout 100 .devx/rt/blockfp8 tune --backend cuda $B --batch-size 48,192 --save-path $R/tuned_b --no-progress > $R/tune_b.log 2>&1; echo "tune b rc=$? wall_s=$(( $(date +%s) - t0 ))"
mkdir -p $R/tuned && cp $R/tuned_a/*.json $R/tuned_b/*.json $R/tuned/ 2>/dev/null
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    timeout 60 .devx/rt/blockfp8 bench --backend cuda --no-progress --no-check --json $cfg $A --batch-size 64,96,128,256 > $R/${v}a_$r.json 2>/dev/null; echo "$r $v a rc=$?"
    timeout 60 .devx/rt/blockfp8 bench --backend cuda --no-progress --no-check --json $cfg $B --batch-size 48,192 > $R/${v}b_$r.json 2>/dev/null; echo "$r $v b rc=$?"
  done
done
python3 ci/h200/ab_compare.py $R/shipa_1.json,$R/shipa_2.json,$R/shipb_1.json,$R/shipb_2.json $R/newa_1.json,$R/newa_2.json,$R/newb_1.json,$R/newb_2.json > $R/ab.md
grep -E "tuned" $R/ab.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
