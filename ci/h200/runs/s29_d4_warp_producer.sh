#!/usr/bin/env bash
# Session 29, call 4 (H200, $OUT set): the whole of producer warp 0 walks the ring, lane 0 issuing
# (stage, coordinates and addresses warp-uniform: uniform registers, no move loop per TMA), on every
# TMA tile but 128x256 s4. .devx/base: the CLI of 2ee70af. GPU tests, then A/B in three
# interleaved rounds with column-major scales (the race input), large and small M.
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
xz -d -T4 .devx/base/blockfp8.xz; chmod +x .devx/base/blockfp8
timeout 220 $B/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.txt 2>&1; echo "tests rc=$?"
grep -E "test result|FAILED|panicked" $R/tests.txt | head
S="--mnk 1024,18432,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 128,18432,7168 --mnk 128,4096,7168 --mnk 64,4096,7168 --mnk 64,18432,7168 --mnk 8,4096,7168 --mnk 64,24576,1536"
for r in 1 2 3; do
  timeout 80 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/base_$r.json 2>/dev/null; echo "$r base rc=$?"
  timeout 80 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/new_$r.json 2>/dev/null; echo "$r new rc=$?"
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json $R/new_1.json,$R/new_2.json,$R/new_3.json | tee $R/ab.md | grep -E "tuned|geomean"
tar czf $OUT/r.tgz -C $OUT r
