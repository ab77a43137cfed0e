#!/usr/bin/env bash
# Session 35, call 2 (H200, $OUT set): call 1 found the K = 1536 / 512 files 4-14% slow at M = 48
# (and 32 / 96 / 128) against a re-tune, so: the other 30 H200 shapes re-tuned at M = 48 (K >= 4096)
# and M = 24, 48 (K <= 2304), the same candidates (.devx/rt35), then the new entries against the
# shipped files, interleaved rounds (column-major scales).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
xz -d -T4 .devx/rt35/blockfp8.xz; chmod +x .devx/rt35/blockfp8
X=.devx/rt35/blockfp8
L=""; for n in 1024 12288 1536 18432 2048 2112 24576 3072 36864 4096 4608 512 576 6144 9216; do L="$L --shape $n,7168"; done
for k in 16384 18432 4096 4608 8192 9216; do L="$L --shape 7168,$k"; done
S="--shape 3072,1536 --shape 6144,1536 --shape 4096,512 --shape 8192,512"
for k in 256 512 1024 2048 2304; do S="$S --shape 7168,$k"; done
declare -A MB=([L]=48 [S]=24,48) TO=([L]=250 [S]=110)
for s in S L; do
  timeout ${TO[$s]} $X tune --backend cuda ${!s} --batch-size ${MB[$s]} --save-path $R/tuned_$s --no-progress --stall-warning 20 > $R/tune_$s.log 2>&1
  echo "tune $s rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -iE "running for|error" $R/tune_$s.log | head -3
done
mkdir -p $R/tuned && cp $R/tuned_*/*.json $R/tuned/ 2>/dev/null; ls $R/tuned | wc -l
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    for s in S L; do
      [ $(( $(date +%s) - t0 )) -lt 550 ] || continue
      timeout $([ $s = L ] && echo 70 || echo 40) $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major $cfg ${!s} --batch-size ${MB[$s]} > $R/${v}${s}_$r.json 2>/dev/null; echo "$r $v $s rc=$? t=$(( $(date +%s) - t0 ))"
    done
  done
done
A=$(ls $R/ship*.json | tr '\n' , | sed 's/,$//'); B=$(ls $R/new*.json | tr '\n' , | sed 's/,$//')
python3 ci/h200/ab_compare.py $A $B > $R/ab.md
grep -E "tuned" $R/ab.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
