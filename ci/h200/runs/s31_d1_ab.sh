#!/usr/bin/env bash
# Session 31, call 1 (H200, $OUT set): two kernel changes against 7dcc992's kernels (.devx/base):
#   early   the TMA warp asks for the first tile's weight tiles before the wait for the previous
#           kernel (-DBLOCKFP8_EARLY_B=1);
#   wgbars  each consumer warpgroup meets the store warp at barriers of its own (-DBLOCKFP8_WG_BARS=1);
#   both    the staged build (.device-bin), whose GPU tests run first.
# Three interleaved rounds of `blockfp8 bench` on 13 race shapes, column-major scales.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
for v in base early wgbars; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
timeout 150 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
timeout 90 $B/device_api --include-ignored --test-threads 2 > $R/device_api.txt 2>&1; echo "device_api rc=$?"
grep -E "test result|FAILED|panicked" $R/device_api.txt | head
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 8,4096,7168 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 128,18432,7168 --mnk 128,7168,18432"
S="$S --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 4096,4096,7168"
for r in 1 2 3; do
  for v in base early wgbars both; do
    bin=.devx/$v/blockfp8; [ $v = both ] && bin=$B/blockfp8
    timeout 90 $bin bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
for v in early wgbars both; do
  echo "== $v against base"
  python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
tar czf $OUT/r.tgz -C $OUT r
