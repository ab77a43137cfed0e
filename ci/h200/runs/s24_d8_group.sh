#!/usr/bin/env bash
# Session 24, call 8 (H200, $OUT set; .device-bin staged, .devx/cfg-g32 carried: the shipped files
# of six M = 4096 shapes with that entry's GROUP_SIZE_M set to 32, so that one group of tiles spans
# all 4096 rows and each weight tile streams from DRAM once; call 7's ncu read 82 MB of DRAM at
# 4096x24576x1536 against DeepGEMM's 58, the 38 MB of B twice). Shipped files against those,
# `blockfp8 bench --no-check --json`, interleaved, two rounds each; then ab_compare.py.
set -u
B=.device-bin
R=$OUT/r; mkdir -p $R
args="--mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 4096,4096,7168 --mnk 4096,7168,16384 --mnk 4096,18432,7168"
for r in 1 2; do
  timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json $args > $R/base_$r.json 2> $R/base_$r.err
  timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir .devx/cfg-g32 $args > $R/g32_$r.json 2> $R/g32_$r.err
done
python3 $B/ab_compare.py $R/base_1.json,$R/base_2.json $R/g32_1.json,$R/g32_2.json | tee $R/ab.md
tar czf $OUT/r.tgz -C $OUT r
