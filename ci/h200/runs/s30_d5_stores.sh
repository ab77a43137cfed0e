#!/usr/bin/env bash
# Session 30, call 5 (H200, $OUT set): the store warp's C pieces one per released block of the next
# tile (the staged build) against 7d7906a's kernels (.devx/base). GPU tests, then three interleaved
# rounds on the store-warp tiles (128x256 s3, 128x192 s4) and one control (128x256 s4); when the
# store-warp shapes gain at least 0.3%, the race of record on the staged build in the same call.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 150 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; t=$?; echo "tests rc=$t"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 4096,4096,7168"
for r in 1 2 3; do
  for v in base new; do
    bin=.devx/base/blockfp8; [ $v = new ] && bin=$B/blockfp8
    timeout 60 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "tuned|geomean"
gain=$(python3 - $R/ab.md <<'PY'
import sys, math
r = [float(l.split("|")[7].strip().rstrip("x")) for l in open(sys.argv[1]) if "| tuned |" in l and "| 4096 | 4096 | 7168 |" not in l]
print(int(bool(r) and math.exp(sum(map(math.log, r)) / len(r)) >= 1.003))
PY
)
echo "store-warp shapes gain >= 0.3%: $gain"
if [ "$t" = 0 ] && [ "$gain" = 1 ]; then
  mkdir -p $R/race
  OUT=$R/race DG_ISOLATED=1 DG_PASSES=2 bash ci/h200/race.sh 2>&1 | tail -30
fi
tar czf $OUT/r.tgz -C $OUT r
