#!/usr/bin/env bash
# Session 31, call 3 (H200, $OUT set): the next dependent launch let in once the TMA thread has
# issued the CTA's last load, on the narrow one-consumer tiles (BN <= 64: trig, the staged build,
# whose GPU tests run first) or on every one-consumer normal tile (trigall, .devx), against
# 7dcc992's kernels (.devx/base), which trigger once the consumers finish their last K block.
# Three interleaved rounds of `blockfp8 bench` on 13 shapes, column-major scales; when trig
# gains at least 0.3% over them and its tests pass, the race of record on it in the same call.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
for v in base trigall; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
timeout 150 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; t=$?; echo "tests rc=$t"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384"
S="$S --mnk 128,7168,18432 --mnk 128,18432,7168 --mnk 8,4096,7168 --mnk 256,4096,7168 --mnk 32,4096,7168 --mnk 1024,18432,7168"
for r in 1 2 3; do
  for v in base trig trigall; do
    bin=.devx/$v/blockfp8; [ $v = trig ] && bin=$B/blockfp8
    timeout 90 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
for v in trig trigall; do
  echo "== $v against base"
  python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
gain=$(python3 - $R/ab_trig.md <<'PY'
import sys, math
r = [float(l.split("|")[7].strip().rstrip("x")) for l in open(sys.argv[1]) if "| tuned |" in l]
print(int(bool(r) and math.exp(sum(map(math.log, r)) / len(r)) >= 1.003))
PY
)
echo "trig gains >= 0.3%: $gain"
if [ "$t" = 0 ] && [ "$gain" = 1 ]; then
  mkdir -p $R/race
  OUT=$R/race DG_ISOLATED=1 DG_PASSES=2 bash ci/h200/race.sh 2>&1 | tail -30
fi
tar czf $OUT/r.tgz -C $OUT r
