#!/usr/bin/env bash
# Session 35, call 1 (H200, $OUT set): the default build's GEMM GPU tests (128x128 s5 now in
# every build, so the store-warp stress test runs it), then the deeper-ring re-tune the
# thirty-fourth session left: N = 24576 / 12288 at K = 1536 and N = 32768 / 16384 at K = 512,
# M = 16-256, with the tiles of `git show <this commit>:ci/h200/runs/s35_rt.patch` among the
# candidates (.devx/rt35), then the new entries against the shipped files, two interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
timeout 150 .device-bin/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.log 2>&1
echo "tests rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -E "test result|panicked|FAILED" $R/tests.log | head -8
xz -d -T4 .devx/rt35/blockfp8.xz; chmod +x .devx/rt35/blockfp8
X=.devx/rt35/blockfp8
B="--shape 24576,1536 --shape 12288,1536 --shape 32768,512 --shape 16384,512"
M=16,32,48,64,96,128,256
timeout 270 $X tune --backend cuda $B --batch-size $M --save-path $R/tuned --no-progress --stall-warning 20 > $R/tune.log 2>&1
echo "tune rc=$? wall_s=$(( $(date +%s) - t0 ))"; grep -iE "stall|running for|error" $R/tune.log | head
for r in 1 2; do
  for v in ship new; do
    cfg=""; [ $v = new ] && cfg="--config-dir $R/tuned"
    [ $(( $(date +%s) - t0 )) -lt 540 ] || continue
    timeout 40 $X bench --backend cuda --no-progress --no-check --json --scale-layout column-major $cfg $B --batch-size $M > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
python3 ci/h200/ab_compare.py $R/ship_1.json,$R/ship_2.json $R/new_1.json,$R/new_2.json > $R/ab.md
grep -E "tuned" $R/ab.md | awk -F'|' '{ if ($8+0 >= 1.01 || $8+0 <= 0.99) print }'; grep geomean $R/ab.md
cd $OUT && tar czf r.tgz r && rm -rf r
