#!/usr/bin/env bash
# Session 30, call 2 (H200, $OUT set). Three CLIs in interleaved rounds, column-major scales (the race input):
#   base = 7d7906a's kernels (.devx/base), v3 = 0b63a53's (the two-consumer tiles' weight scales per tile by
#   bulk copy, .devx/v3), v4 = the staged build (v3 + the first ring of the CTA's first tile asked of L2
#   before griddep_wait). GPU tests of the staged build first (GEMM and device API).
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
for v in base v3; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
timeout 200 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
timeout 120 $B/device_api --include-ignored --test-threads 4 > $R/device_api.txt 2>&1; echo "device_api rc=$?"
grep -E "test result|FAILED|panicked" $R/device_api.txt | head
S="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 1024,18432,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 128,18432,7168 --mnk 128,4096,7168 --mnk 64,4096,7168 --mnk 64,18432,7168 --mnk 8,4096,7168"
for r in 1 2 3; do
  for v in base v3 v4; do
    bin=.devx/$v/blockfp8; [ $v = v4 ] && bin=$B/blockfp8
    timeout 100 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
for p in "base v3" "base v4" "v3 v4"; do
  set -- $p
  echo "== $2 over $1"
  python3 $B/ab_compare.py $R/$1_1.json,$R/$1_2.json,$R/$1_3.json $R/$2_1.json,$R/$2_2.json,$R/$2_3.json | tee $R/ab_$1_$2.md | grep -E "tuned|geomean"
done
tar czf $OUT/r.tgz -C $OUT r
