#!/usr/bin/env bash
# Session 24, call 2 (H200, $OUT set): C stored by TMA in boxes of a warpgroup's 64 rows, one
# thread issuing the group's stores (.devx), and the same with an L2 evict-first hint on the
# stores (.devy, -DBLOCKFP8_C_EVICT_FIRST=1), against the shipped build (.device-bin/blockfp8,
# boxes of a warp's 16 rows). Each variant's GPU tests of the GEMM paths first, then
# `blockfp8 bench --no-check --json` of the 20 race shapes, interleaved, two rounds each.
set -u
B=.device-bin
here=$(cd "$(dirname "$0")" && pwd)
R=$OUT/r; mkdir -p $R
date -u > $R/dates.txt
for v in x y; do
  timeout 200 .dev$v/cuda-x --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs > $R/${v}_tests.log 2>&1; echo "$v tests rc=$?" >> $R/${v}_tests.log
  grep -E "test result|panicked|FAILED|rc=" $R/${v}_tests.log | head -8
done
date -u >> $R/dates.txt
shapes="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
for r in 1 2; do
  for v in base x y; do
    bin=$B/blockfp8; [ $v != base ] && bin=.dev$v/blockfp8
    echo "$v round $r $(date -u +%T)" >> $R/dates.txt
    timeout 150 $bin bench --backend cuda --no-progress --no-check --json "${args[@]}" > $R/ab_${v}_$r.json 2> $R/ab_${v}_$r.err
  done
done
echo "== 16-row boxes (A) against 64-row boxes (B)"; python3 $here/ab_compare.py $R/ab_base_1.json,$R/ab_base_2.json $R/ab_x_1.json,$R/ab_x_2.json | tee $R/ab_x.md | grep -E "tuned|geomean"
echo "== 64-row boxes (A) against 64-row boxes + evict-first (B)"; python3 $here/ab_compare.py $R/ab_x_1.json,$R/ab_x_2.json $R/ab_y_1.json,$R/ab_y_2.json | tee $R/ab_y.md | grep -E "geomean"
date -u >> $R/dates.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
