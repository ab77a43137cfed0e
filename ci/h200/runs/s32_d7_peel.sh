#!/usr/bin/env bash
# Session 32, call 7 (H200, $OUT set): call 6 confirmed that c3ca59a's never-taken trigger branch in
# the TMA thread's loop costs 9% at 64x4096x7168. So, the other way: the tile's first stage (the
# one that brings the slabs) taken out of the loop, so that the steady loop carries no slab branch
# (-DBLOCKFP8_PRODUCER_PEEL, .devx/peel), against the shipped kernels (.devx/base); checked
# against the CPU reference first (slab tiles with one and several tiles per CTA), four rounds.
set -u
R=$OUT/r; mkdir -p $R
for v in base peel; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
for l in column-major row-major; do
  timeout 120 .devx/peel/blockfp8 bench --backend cuda --no-progress --json --scale-layout $l \
    --mnk 64,4096,7168 --mnk 100,4096,7168 --mnk 200,4096,1024 --mnk 1000,2112,1040 > $R/check_$l.json 2>/dev/null; echo "check $l rc=$?"
done
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 96,4096,7168 --mnk 64,18432,7168 --mnk 64,7168,18432 --mnk 128,24576,1536 --mnk 4096,4096,7168 --mnk 4096,2112,7168"
for r in 1 2 3 4; do
  for v in base peel; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
L() { echo $R/$1_1.json,$R/$1_2.json,$R/$1_3.json,$R/$1_4.json; }
python3 ci/h200/ab_compare.py $(L base) $(L peel) | tee $R/ab.md | grep -E "tuned|geomean"
python3 - $R <<'PY'
import json, sys
for f in ("check_column-major", "check_row-major"):
    for s in json.load(open(f"{sys.argv[1]}/{f}.json"))["shapes"]:
        print(f, s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tar czf $OUT/r.tgz -C $OUT r
