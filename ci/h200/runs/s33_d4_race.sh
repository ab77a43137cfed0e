#!/usr/bin/env bash
# Session 33, call 4 (H200, $OUT set): the build staged with the deeper rings (the kernel default's
# 64x64 s11 and the re-tuned entries of call 3): its GPU tests, then the same-call A/B against the
# shipped kernels and files of e248d8c (.devx/base) on the shapes the change reaches (three
# interleaved rounds, column-major scales), then the race of record (race.sh, DeepGEMM built
# from the carried peers folder, one process per shape, two passes).
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 170 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; t=$?; echo "tests rc=$t"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 64,4096,7168 --mnk 96,4096,7168 --mnk 128,4096,7168 --mnk 128,2112,7168 --mnk 96,2048,7168 --mnk 128,1536,7168 --mnk 256,4096,7168 --mnk 100,520,1040 --mnk 128,7168,18432 --mnk 1024,4096,7168"
for r in 1 2 3; do
  for v in base new; do
    bin=.devx/base/blockfp8; [ $v = new ] && bin=$B/blockfp8
    timeout 80 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "\| [0-9]+ \|"
grep geomean $R/ab.md
if [ "$t" = 0 ]; then
  mkdir -p $R/race
  OUT=$R/race DG_ISOLATED=1 DG_PASSES=2 bash ci/h200/race.sh 2>&1 | tail -32
fi
cd $OUT && tar czf r.tgz r && rm -rf r
