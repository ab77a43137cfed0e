#!/usr/bin/env bash
# Session 30, call 4 (H200, $OUT set): base = 7d7906a's kernels (.devx/base) against the staged build
# (the read-ahead tiles release a block's stage before waiting for the next block), three interleaved
# rounds, column-major scales (the race input). GPU tests of the staged build first.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 200 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,18432,7168 --mnk 64,7168,18432 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 8,4096,7168 --mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,7168,16384"
for r in 1 2 3; do
  for v in base new; do
    bin=.devx/base/blockfp8; [ $v = new ] && bin=$B/blockfp8
    timeout 100 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "tuned|geomean"
tar czf $OUT/r.tgz -C $OUT r
