#!/usr/bin/env bash
# Session 35, call 4 (H200, $OUT set): (1) the GPU tests of the default build, which now compiles
# 32x64 s10 (named by the M = 24 / 32 entries); (2) those entries (call 3's re-tune, merged in the
# tree) against the files before them (.devx/conf_old), the same CLI, two interleaved rounds;
# (3) M = 16 re-tuned at the long-K shapes with .devx/rt35's candidates, and that A/B.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.log 2>&1
echo "tests rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -E "test result|panicked|FAILED" $R/tests.log | head -8
bench() { timeout $2 $1 bench --backend cuda --no-progress --no-check --json --scale-layout column-major "${@:3}"; }
L=""; for n in 1024 12288 1536 18432 2048 2112 24576 3072 36864 4096 4608 512 576 6144 9216; do L="$L --shape $n,7168"; done
for k in 16384 18432 4096 4608 8192 9216; do L="$L --shape 7168,$k"; done
for r in 1 2; do
  bench .device-bin/blockfp8 60 --config-dir .devx/conf_old $L --batch-size 24,32 > $R/c_old_$r.json 2>/dev/null; echo "old $r rc=$? t=$(( $(date +%s) - t0 ))"
  bench .device-bin/blockfp8 60 $L --batch-size 24,32 > $R/c_new_$r.json 2>/dev/null; echo "new $r rc=$? t=$(( $(date +%s) - t0 ))"
done
python3 ci/h200/ab_compare.py $R/c_old_1.json,$R/c_old_2.json $R/c_new_1.json,$R/c_new_2.json > $R/ab_c.md
grep -E "tuned" $R/ab_c.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab_c.md
xz -d -T4 .devx/rt35/blockfp8.xz; chmod +x .devx/rt35/blockfp8
X=.devx/rt35/blockfp8
timeout 150 $X tune --backend cuda $L --batch-size 16 --save-path $R/tuned --no-progress --stall-warning 20 > $R/tune.log 2>&1
echo "tune rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -iE "running for|error" $R/tune.log | head -3
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    [ $(( $(date +%s) - t0 )) -lt 520 ] || continue
    bench $X 45 $cfg $L --batch-size 16 > $R/l_${v}_$r.json 2>/dev/null; echo "l $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
A=$(ls $R/l_ship*.json | tr '\n' , | sed 's/,$//'); B=$(ls $R/l_new*.json | tr '\n' , | sed 's/,$//')
python3 ci/h200/ab_compare.py $A $B > $R/ab_l.md
grep -E "tuned" $R/ab_l.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab_l.md
cd $OUT && tar czf r.tgz r && rm -rf r
