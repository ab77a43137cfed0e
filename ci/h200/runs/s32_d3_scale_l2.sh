#!/usr/bin/env bash
# Session 32, call 3 (H200, $OUT set): the activation-scale tensor map's L2 promotion (shipped:
# none; the fp8 operand maps and DeepGEMM's scale maps: 256 B), set at run time by
# BLOCKFP8_EXP_SCALE_L2 (the tensor maps are encoded on the host, so one CLI runs every value):
# the shipped kernels (.devx/base) under none / 128 / 256, and the 12-stage one-consumer tiles
# with per-stage activation-scale TMAs (.devx/ota, call 2: 0.81x at 64x4096x7168) under 256,
# four interleaved rounds; checked against the CPU reference first under 256.
set -u
R=$OUT/r; mkdir -p $R
for v in base ota; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
BLOCKFP8_EXP_SCALE_L2=256 timeout 150 .devx/base/blockfp8 bench --backend cuda --no-progress --json --scale-layout column-major \
  --mnk 100,4096,7168 --mnk 1000,2112,1040 --mnk 3,520,1040 --mnk 64,4096,7168 > $R/check.json 2>/dev/null; echo "check rc=$?"
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 96,4096,7168 --mnk 64,7168,18432 --mnk 128,18432,7168 --mnk 1024,4096,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048"
SO="--mnk 64,4096,7168 --mnk 64,7168,16384 --mnk 64,7168,18432"
for r in 1 2 3 4; do
  for l in none 128 256; do
    BLOCKFP8_EXP_SCALE_L2=$l timeout 100 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/$l"_"$r.json 2>/dev/null; echo "$r $l rc=$?"
  done
  BLOCKFP8_EXP_SCALE_L2=256 timeout 100 .devx/ota/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $SO > $R/ota256_$r.json 2>/dev/null; echo "$r ota256 rc=$?"
done
L() { echo $R/$1_1.json,$R/$1_2.json,$R/$1_3.json,$R/$1_4.json; }
for p in "none 128" "none 256" "none ota256"; do
  set -- $p; echo "== $2 over $1"
  python3 ci/h200/ab_compare.py $(L $1) $(L $2) | tee $R/ab_$1_$2.md | grep -E "tuned|geomean"
done
python3 - $R <<'PY'
import json, sys
for s in json.load(open(f"{sys.argv[1]}/check.json"))["shapes"]:
    print("check", s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tar czf $OUT/r.tgz -C $OUT r
