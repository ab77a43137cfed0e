#!/usr/bin/env bash
# Session 31, call 5 (H200, $OUT set): the TMA thread's K loop walked in whole turns of the ring
# unrolled over the stages (constant stage addresses, as the consumers' loop; the staged build,
# -DBLOCKFP8_PRODUCER_TURNS=1, whose GPU tests run first) against 7dcc992's kernels (.devx/base).
# Call 4 found the small-M shapes 4-9% slower when only ptxas's shape of this loop changed.
# Three interleaved rounds of `blockfp8 bench` on 10 shapes, column-major scales; when they gain
# at least 0.5% and the tests pass, the race of record on the staged build in the same call.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 150 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; t=$?; echo "tests rc=$t"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,7168,18432 --mnk 128,7168,18432"
S="$S --mnk 4096,24576,1536 --mnk 4096,4096,7168 --mnk 4096,2112,7168 --mnk 8,4096,7168"
for r in 1 2 3; do
  for v in base new; do
    bin=.devx/base/blockfp8; [ $v = new ] && bin=$B/blockfp8
    timeout 90 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "tuned|geomean"
gain=$(python3 - $R/ab.md <<'PY'
import sys, math
r = [float(l.split("|")[7].strip().rstrip("x")) for l in open(sys.argv[1]) if "| tuned |" in l]
print(int(bool(r) and math.exp(sum(map(math.log, r)) / len(r)) >= 1.005 and min(r) >= 0.99))
PY
)
echo "gain >= 0.5% with no shape below 0.99x: $gain"
if [ "$t" = 0 ] && [ "$gain" = 1 ]; then
  mkdir -p $R/race
  OUT=$R/race DG_ISOLATED=1 DG_PASSES=2 bash ci/h200/race.sh 2>&1 | tail -32
fi
tar czf $OUT/r.tgz -C $OUT r
