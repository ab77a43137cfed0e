#!/usr/bin/env bash
# Session 35, call 3 (H200, $OUT set): (1) the merged files of calls 1-2 against the files before,
# at every changed entry, two interleaved rounds; conf_b is what the tree ships (64x64 s11 / s12, both
# compiled in every build, where the tuner took s10 / s13 at M = 48, N = 7168, K = 9216 / 18432),
# conf_a the tuner's own picks. (2) The long-K shapes re-tuned at M = 24 and 32, and that A/B.
# .devx/rt35 embeds the files before this session's merges.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
xz -d -T4 .devx/rt35/blockfp8.xz; chmod +x .devx/rt35/blockfp8
X=.devx/rt35/blockfp8
bench() { timeout $1 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major "${@:2}"; }
C1="--shape 24576,1536 --shape 12288,1536 --shape 32768,512 --shape 16384,512 --shape 4096,512 --shape 7168,256 --shape 7168,512 --shape 8192,512 --shape 7168,1024"
C2="--shape 2112,7168 --shape 4608,7168 --shape 6144,7168 --shape 9216,7168 --shape 7168,9216 --shape 7168,16384 --shape 7168,18432"
for r in 1 2; do
  for v in ship conf_b conf_a; do
    cfg=""; [ $v != ship ] && cfg="--config-dir .devx/$v"
    bench 40 $cfg $C1 --batch-size 24,32,48,96,128 > $R/c1_${v}_$r.json 2>/dev/null; echo "c1 $r $v rc=$? t=$(( $(date +%s) - t0 ))"
    bench 40 $cfg $C2 --batch-size 48 > $R/c2_${v}_$r.json 2>/dev/null; echo "c2 $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
for v in conf_b conf_a; do
  python3 ci/h200/ab_compare.py $R/c1_ship_1.json,$R/c1_ship_2.json,$R/c2_ship_1.json,$R/c2_ship_2.json $R/c1_${v}_1.json,$R/c1_${v}_2.json,$R/c2_${v}_1.json,$R/c2_${v}_2.json > $R/ab_$v.md
  echo "== $v"; grep geomean $R/ab_$v.md
done
grep -E "tuned" $R/ab_conf_b.md | awk -F'|' '{ if ($8+0 <= 1.0) print }'
L=""; for n in 1024 12288 1536 18432 2048 2112 24576 3072 36864 4096 4608 512 576 6144 9216; do L="$L --shape $n,7168"; done
for k in 16384 18432 4096 4608 8192 9216; do L="$L --shape 7168,$k"; done
timeout 200 $X tune --backend cuda $L --batch-size 24,32 --save-path $R/tuned --no-progress --stall-warning 20 > $R/tune.log 2>&1
echo "tune rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -iE "running for|error" $R/tune.log | head -3
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    [ $(( $(date +%s) - t0 )) -lt 540 ] || continue
    bench 60 $cfg $L --batch-size 24,32 > $R/l_${v}_$r.json 2>/dev/null; echo "l $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
A=$(ls $R/l_ship*.json | tr '\n' , | sed 's/,$//'); B=$(ls $R/l_new*.json | tr '\n' , | sed 's/,$//')
python3 ci/h200/ab_compare.py $A $B > $R/ab_l.md
grep -E "tuned" $R/ab_l.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab_l.md
cd $OUT && tar czf r.tgz r && rm -rf r
