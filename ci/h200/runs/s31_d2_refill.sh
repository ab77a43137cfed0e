#!/usr/bin/env bash
# Session 31, call 2 (H200, $OUT set): the one-consumer tiles' ring refilled in batches of REFILL
# stages (so that a weight row's consecutive K blocks are asked of memory together) against
# 7dcc992's kernels (.devx/base): refill2 (.devx) and refill4 (the staged build, whose GPU tests
# run first). Three interleaved rounds of `blockfp8 bench` on 12 shapes (10 on one-consumer
# tiles, two controls), column-major scales; when refill4 gains at least 0.5% over the
# one-consumer shapes and its tests pass, the race of record on it in the same call.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
for v in base refill2; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
timeout 150 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; t=$?; echo "tests rc=$t"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,7168,18432"
S="$S --mnk 256,4096,7168 --mnk 96,7168,2048 --mnk 8,4096,7168 --mnk 4096,4096,7168"
for r in 1 2 3; do
  for v in base refill2 refill4; do
    bin=.devx/$v/blockfp8; [ $v = refill4 ] && bin=$B/blockfp8
    timeout 90 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
for v in refill2 refill4; do
  echo "== $v against base"
  python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
gain=$(python3 - $R/ab_refill4.md <<'PY'
import sys, math
rows = [l.split("|") for l in open(sys.argv[1]) if "| tuned |" in l]
r = [float(c[7].strip().rstrip("x")) for c in rows if int(c[1]) not in (8, 4096)]
print(int(bool(r) and math.exp(sum(map(math.log, r)) / len(r)) >= 1.005))
PY
)
echo "refill4 gains >= 0.5% on the one-consumer shapes: $gain"
if [ "$t" = 0 ] && [ "$gain" = 1 ]; then
  mkdir -p $R/race
  OUT=$R/race DG_ISOLATED=1 DG_PASSES=2 bash ci/h200/race.sh 2>&1 | tail -30
fi
tar czf $OUT/r.tgz -C $OUT r
