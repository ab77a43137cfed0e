#!/usr/bin/env bash
# Session 35, call 5 (H200, $OUT set; the session's last device minutes): the short-K shapes that
# call 2 re-tuned at M = 24 / 48, now at M = 16 and 32 (.devx/rt35's candidates), and that A/B
# against the shipped files, two interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
t0=$(date +%s)
xz -d -T4 .devx/rt35/blockfp8.xz; chmod +x .devx/rt35/blockfp8
X=.devx/rt35/blockfp8
S="--shape 3072,1536 --shape 6144,1536 --shape 4096,512 --shape 8192,512"
for k in 256 512 1024 2048 2304; do S="$S --shape 7168,$k"; done
timeout 60 $X tune --backend cuda $S --batch-size 16,32 --save-path $R/tuned --no-progress --stall-warning 20 > $R/tune.log 2>&1
echo "tune rc=$? wall_s=$(( $(date +%s) - t0 ))"
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    timeout 25 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major $cfg $S --batch-size 16,32 > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$? t=$(( $(date +%s) - t0 ))"
    cd $OUT && tar czf r.tgz r; cd - > /dev/null
  done
done
python3 ci/h200/ab_compare.py $R/ship_1.json,$R/ship_2.json $R/new_1.json,$R/new_2.json > $R/ab.md
grep -E "tuned" $R/ab.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
