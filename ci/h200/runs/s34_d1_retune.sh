#!/usr/bin/env bash
# Session 34, call 1 (H200, $OUT set): re-tune with deeper one-consumer rings among the candidates
# (.devx/rt: the default build plus the tiles of `git show <this commit>:ci/h200/runs/s34_rt.patch`),
# M = 64, 96, 128, 256, on the shapes the thirty-third session left: N = 7168 at K = 16384 / 18432,
# N = 9216-36864 at K = 7168, the K = 1536 and K = 512 shapes of tp 1-8. Then the new entries
# against the shipped files, two interleaved rounds of `blockfp8 bench`.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
xz -d -T4 .devx/rt/blockfp8.xz; chmod +x .devx/rt/blockfp8
X=.devx/rt/blockfp8
A="--shape 7168,16384 --shape 7168,18432 --shape 18432,7168 --shape 9216,7168 --shape 36864,7168"
B="--shape 24576,1536 --shape 12288,1536 --shape 32768,512 --shape 16384,512"
C="--shape 24576,7168 --shape 12288,7168 --shape 6144,1536 --shape 3072,1536 --shape 8192,512 --shape 4096,512"
M=64,96,128,256
t0=$(date +%s)
declare -A TO=([A]=180 [B]=100 [C]=110)
for s in A B C; do
  timeout ${TO[$s]} $X tune --backend cuda ${!s} --batch-size $M --save-path $R/tuned_$s --no-progress > $R/tune_$s.log 2>&1
  echo "tune $s rc=$? wall_s=$(( $(date +%s) - t0 ))"
done
mkdir -p $R/tuned && cp $R/tuned_*/*.json $R/tuned/ 2>/dev/null
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    for s in A B C; do
      [ $(( $(date +%s) - t0 )) -lt 540 ] || continue
      timeout 30 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major $cfg ${!s} --batch-size $M > $R/${v}${s}_$r.json 2>/dev/null; echo "$r $v $s rc=$? t=$(( $(date +%s) - t0 ))"
    done
  done
done
python3 ci/h200/ab_compare.py $R/shipA_1.json,$R/shipA_2.json,$R/shipB_1.json,$R/shipB_2.json,$R/shipC_1.json,$R/shipC_2.json $R/newA_1.json,$R/newA_2.json,$R/newB_1.json,$R/newB_2.json,$R/newC_1.json,$R/newC_2.json > $R/ab.md
grep -E "tuned" $R/ab.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
