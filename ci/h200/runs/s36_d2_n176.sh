#!/usr/bin/env bash
# Session 36, call 2 (H200, $OUT set). .devx/n176: CLI and cuda test binary of the tree with the
# 128x176 tile (two consumers of 64x176, up to three weight-scale blocks per tile) compiled beside
# the default build's tiles. (1) GPU tests (every compiled config: N = 1480 reaches all eight start
# offsets of 176-wide tiles; the two-consumer stress). (2) Same-call A/B, three interleaved rounds:
# shipped files against forced files naming 128x176 s4 where it takes fewer column-waves than the
# shipped tile (N = 2112 at M = 4096 / 8192: 3 / 6 waves of 176 columns against 3 / 6 of 192;
# N = 7168 / 24576 at M = 4096: 1.8 / 2.6% fewer).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
X=.devx/n176/blockfp8
timeout 200 .devx/n176/cuda --include-ignored --test-threads 4 every_compiled_config two_consumer_tiles gemm_anchor_shapes > $R/tests.log 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "test result|FAILED|panicked" $R/tests.log | head
F=ci/h200/force_tile.py
python3 $F $R/f176 --tile m128n176w8s4 --group 8 --mnk 4096,2112,7168 --mnk 8192,2112,7168 > /dev/null
python3 $F $R/f176 --tile m128n176w8s4 --group 16 --mnk 4096,7168,16384 > /dev/null
python3 $F $R/f176 --tile m128n176w8s4 --group 4 --mnk 4096,7168,2048 > /dev/null
python3 $F $R/f176 --tile m128n176w8s4 --group 32 --mnk 4096,24576,1536 > /dev/null
ALL="--mnk 4096,2112,7168 --mnk 8192,2112,7168 --mnk 4096,7168,16384 --mnk 4096,7168,2048 --mnk 4096,24576,1536"
bench() { timeout $1 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major "${@:2}"; }
for r in 1 2 3; do
  for v in ship f176; do
    cfg=""; [ $v != ship ] && cfg="--config-dir $R/$v"
    bench 80 $cfg $ALL > $R/b_${v}_$r.json 2>$R/b_${v}_$r.err; echo "b $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
python3 ci/h200/ab_compare.py $R/b_ship_1.json,$R/b_ship_2.json,$R/b_ship_3.json $R/b_f176_1.json,$R/b_f176_2.json,$R/b_f176_3.json > $R/ab_f176.md
grep tuned $R/ab_f176.md; grep geomean $R/ab_f176.md
# accuracy of the forced tile through the CLI's own check (CPU reference) at the race shape
timeout 120 $X bench --backend cuda --no-progress --scale-layout column-major --config-dir $R/f176 --mnk 4096,2112,7168 --rounds 1 --repeats 3 > $R/check.txt 2>&1; echo "check rc=$?"; grep -iE "calc_diff|diff|tuned" $R/check.txt | head -5
cd $OUT && tar czf r.tgz r && rm -rf r
