#!/usr/bin/env bash
# Session 32, call 2 (H200, $OUT set): the 12-stage one-consumer tiles (64x32 s12, 64x64 s12)
# taking a stage's activation scales by TMA, as DeepGEMM's stages do (-DBLOCKFP8_ONE_AS_TMA,
# .devx/ota; the weight scales still by the scale warp), against the shipped kernels
# (.devx/base: 64x32 s12 with per-tile slabs, 64x64 s12 with 4-byte cp.async per stage).
# ci/h200/runs/s32_cfg moves 128x4096x7168 to 64x64 s12 (shipped: s8 with slabs), so each build
# runs it both ways; ci/h200/runs/s32_cfg2 moves it to 64x32 s12 (two tiles per CTA). The ota build is checked against the CPU reference first (the config
# folder also sends ragged N = 520, K = 1040 to both tiles), then four interleaved rounds.
set -u
R=$OUT/r; mkdir -p $R
for v in base ota; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
CFG="--config-dir ci/h200/runs/s32_cfg"
timeout 200 .devx/ota/blockfp8 bench --backend cuda --no-progress --json --scale-layout column-major $CFG \
  --mnk 64,4096,7168 --mnk 100,4096,7168 --mnk 128,4096,7168 --mnk 3,520,1040 --mnk 70,520,1040 --mnk 64,7168,16384 > $R/ota_check_cols.json 2>$R/ota_check.err; echo "ota check cols rc=$?"
timeout 200 .devx/ota/blockfp8 bench --backend cuda --no-progress --json --scale-layout row-major $CFG \
  --mnk 100,4096,7168 --mnk 3,520,1040 --mnk 70,520,1040 > $R/ota_check_rows.json 2>>$R/ota_check.err; echo "ota check rows rc=$?"
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,7168,18432 --mnk 64,7168,16384 --mnk 96,4096,7168"
for r in 1 2 3 4; do
  for v in base ota; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $CFG $S > $R/${v}cfg_$r.json 2>/dev/null; echo "$r ${v}cfg rc=$?"
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major --config-dir ci/h200/runs/s32_cfg2 --mnk 128,4096,7168 > $R/${v}cfg2_$r.json 2>/dev/null; echo "$r ${v}cfg2 rc=$?"
  done
done
L() { echo $R/$1_1.json,$R/$1_2.json,$R/$1_3.json,$R/$1_4.json; }
for p in "base ota" "base basecfg" "base otacfg" "basecfg otacfg" "base basecfg2" "base otacfg2"; do
  set -- $p; echo "== $2 over $1"
  python3 ci/h200/ab_compare.py $(L $1) $(L $2) | tee $R/ab_$1_$2.md | grep -E "tuned|geomean"
done
python3 - $R <<'PY'
import json, sys
for f in ("ota_check_cols", "ota_check_rows"):
    for s in json.load(open(f"{sys.argv[1]}/{f}.json"))["shapes"]:
        print(f, s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tail -5 $R/ota_check.err
tar czf $OUT/r.tgz -C $OUT r
