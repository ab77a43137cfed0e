#!/usr/bin/env bash
# Session 31, call 4 (H200, $OUT set): the next dependent launch let in once the TMA thread has
# issued the CTA's last load on the narrow one-consumer tiles only when the grid has more work
# items than CTAs (the staged build, whose GPU tests run first), against 7dcc992's kernels
# (.devx/base). Three interleaved rounds of `blockfp8 bench` on 5 multi-round shapes and 2
# single-round controls, column-major scales; when the multi-round shapes gain at least 0.5% and
# the controls hold (>= 0.995x), the race of record on the staged build in the same call.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 150 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; t=$?; echo "tests rc=$t"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 64,32768,512 --mnk 64,24576,1536 --mnk 64,18432,7168 --mnk 128,32768,512 --mnk 128,24576,1536 --mnk 64,4096,7168 --mnk 128,4096,7168"
for r in 1 2 3; do
  for v in base new; do
    bin=.devx/base/blockfp8; [ $v = new ] && bin=$B/blockfp8
    timeout 90 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "tuned|geomean"
ok=$(python3 - $R/ab.md <<'PY'
import sys, math
rows = [l.split("|") for l in open(sys.argv[1]) if "| tuned |" in l]
gm = lambda r: math.exp(sum(map(math.log, r)) / len(r)) if r else 0
multi = [float(c[7].strip().rstrip("x")) for c in rows if int(c[2]) != 4096]
ctrl = [float(c[7].strip().rstrip("x")) for c in rows if int(c[2]) == 4096]
print(int(gm(multi) >= 1.005 and gm(ctrl) >= 0.995))
PY
)
echo "multi-round gain >= 0.5% and controls hold: $ok"
if [ "$t" = 0 ] && [ "$ok" = 1 ]; then
  mkdir -p $R/race
  OUT=$R/race DG_ISOLATED=1 DG_PASSES=2 bash ci/h200/race.sh 2>&1 | tail -32
fi
tar czf $OUT/r.tgz -C $OUT r
