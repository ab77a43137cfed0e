#!/usr/bin/env bash
# Session 28, call 3 (H200, $OUT set). .devx/head: the CLI of eac6e31 (kernels of 14239a9);
# .devx/sa1 / .devx/sa0: the same built with -DBLOCKFP8_STORE_AFTER_BLOCK=1 / 0 (the store warp
# issues a tile's C stores only once the consumers have released block 1 / block 0 of the next
# tile, so that the TMA loads of the next blocks are queued before the stores). Call 2's profile
# of 128x256 s3 at 4096x24576x1536 had the consumers waiting for data at 8% of their samples,
# mostly for the stage of blocks 1, 4, 7 and 10 (DeepGEMM's: 1%).
# Three interleaved rounds of the store-warp shapes and two controls, then a checked run of each variant.
set -u
R=$OUT/r; mkdir -p $R
for v in head sa1 sa0; do xz -d -T4 .devx/$v/*.xz; chmod +x .devx/$v/*; done
S="--mnk 4096,24576,1536 --mnk 2048,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168 --mnk 1024,18432,7168 --mnk 4096,4096,7168 --mnk 128,18432,7168"
for r in 1 2 3; do
  for v in head sa1 sa0; do
    timeout 90 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json $S > $R/${v}_$r.json 2> $R/${v}_$r.err; echo "$r $v rc=$?"
  done
done
for v in sa1 sa0; do
  echo "== $v over head"
  python3 ci/h200/ab_compare.py $R/head_1.json,$R/head_2.json,$R/head_3.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
for v in sa1 sa0; do
  timeout 120 .devx/$v/blockfp8 bench --backend cuda --no-progress --json --warmup 1 --repeats 3 $S --mnk 4000,24576,1536 --mnk 3000,7168,2048 > $R/check_$v.json 2> $R/check_$v.err; echo "check $v rc=$?"
  python3 -c "import json,sys; d=json.load(open('$R/check_$v.json')); print('$v calc_diff max', max(x.get('calc_diff') or 0 for s in d['shapes'] for x in s['measurements']))"
done
tar czf $OUT/r.tgz -C $OUT r
