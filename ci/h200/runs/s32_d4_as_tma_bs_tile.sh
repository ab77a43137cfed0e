#!/usr/bin/env bash
# Session 32, call 4 (H200, $OUT set): DeepGEMM's scale scheme on the 12-stage one-consumer tiles
# (.devx/ota2, -DBLOCKFP8_ONE_AS_TMA -DBLOCKFP8_ONE_AS_TMA2): a stage's activation scales by TMA
# and the tile's weight scales by one bulk copy with its first stage (call 2's per-stage
# weight-scale copies kept the scale warp on every stage: 0.81x), against the shipped kernels
# (.devx/base; 64x32 s12 with slabs). ci/h200/runs/s32_cfg moves 128x4096x7168 to 64x64 s12
# and sends N = 4096 K = 1024 (several tiles per CTA) and ragged N = 520 K = 1040 (K blocks not a
# multiple of 4: per-stage weight scales) to both tiles. Checks first, then four rounds.
set -u
R=$OUT/r; mkdir -p $R
for v in base ota2; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
CFG="--config-dir ci/h200/runs/s32_cfg"
for l in column-major row-major; do
  timeout 200 .devx/ota2/blockfp8 bench --backend cuda --no-progress --json --scale-layout $l $CFG \
    --mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 300,4096,1024 --mnk 20,4096,1024 --mnk 3,520,1040 --mnk 70,520,1040 --mnk 64,7168,16384 > $R/check_$l.json 2>$R/check.err; echo "check $l rc=$?"
done
timeout 100 .devx/ota2/blockfp8 bench --backend cuda --no-progress --json --scale-layout column-major --config-dir ci/h200/runs/s32_cfg2 --mnk 128,4096,7168 --mnk 100,4096,7168 > $R/check_cfg2.json 2>>$R/check.err; echo "check cfg2 rc=$?"
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 96,4096,7168 --mnk 64,7168,18432 --mnk 300,4096,1024"
for r in 1 2 3 4; do
  for v in base ota2; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $CFG $S > $R/${v}cfg_$r.json 2>/dev/null; echo "$r ${v}cfg rc=$?"
  done
done
L() { echo $R/$1_1.json,$R/$1_2.json,$R/$1_3.json,$R/$1_4.json; }
for p in "base ota2" "base ota2cfg" "basecfg ota2cfg"; do
  set -- $p; echo "== $2 over $1"
  python3 ci/h200/ab_compare.py $(L $1) $(L $2) | tee $R/ab_$1_$2.md | grep -E "tuned|geomean"
done
python3 - $R <<'PY'
import json, sys
for f in ("check_column-major", "check_row-major", "check_cfg2"):
    for s in json.load(open(f"{sys.argv[1]}/{f}.json"))["shapes"]:
        print(f, s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tail -3 $R/check.err
tar czf $OUT/r.tgz -C $OUT r
