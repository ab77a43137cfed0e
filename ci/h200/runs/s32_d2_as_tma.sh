#!/usr/bin/env bash
# Session 32, call 2 (H200, $OUT set): the 12-stage one-consumer tiles (64x32 s12, 64x64 s12)
# taking a stage's activation scales by TMA, as DeepGEMM's stages do (-DBLOCKFP8_ONE_AS_TMA,
# .devx/ota; the weight scales still by the scale warp), against the shipped kernels
# (.devx/base: 64x32 s12 with per-tile slabs, 64x64 s12 with 4-byte cp.async per stage).
# ci/h200/runs/s32_cfg moves 128x4096x7168 to 64x64 s12 (shipped: s8 with slabs), so each build
# runs it both ways; ci/h200/runs/s32_cfg2 moves it to 64x32 s12 (two tiles per CTA). The ota build is checked against the CPU reference first (the config
# folder also sends ragged N = 520, K = 1040 to both tiles), then four interleaved rounds.
# Then the TMA thread's path from a stage's `empty` wait to its copies: the stage's operands
# worked out before the wait (-DBLOCKFP8_PRODUCER_PRE, .devx/pre) and the expected bytes
# announced after the copies, as DeepGEMM (-DBLOCKFP8_TX_LAST, .devx/txl), four rounds.
set -u
R=$OUT/r; mkdir -p $R
for v in base ota pre txl; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
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
timeout 100 .devx/txl/blockfp8 bench --backend cuda --no-progress --json --scale-layout column-major --mnk 100,4096,7168 --mnk 1000,2112,1040 --mnk 3,520,1040 > $R/txl_check.json 2>/dev/null; echo "txl check rc=$?"
timeout 100 .devx/pre/blockfp8 bench --backend cuda --no-progress --json --scale-layout column-major --mnk 100,4096,7168 --mnk 1000,2112,1040 --mnk 3,520,1040 > $R/pre_check.json 2>/dev/null; echo "pre check rc=$?"
S2="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,18432,7168 --mnk 128,24576,1536 --mnk 8,4096,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168"
for r in 1 2 3 4; do
  for v in base pre txl; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S2 > $R/${v}2_$r.json 2>/dev/null; echo "$r ${v}2 rc=$?"
  done
done
for v in pre txl; do
  echo "== $v over base"
  python3 ci/h200/ab_compare.py $(L base2) $(L ${v}2) | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
python3 - $R <<'PY'
import json, sys
for f in ("txl_check", "pre_check"):
    for s in json.load(open(f"{sys.argv[1]}/{f}.json"))["shapes"]:
        print(f, s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tar czf $OUT/r.tgz -C $OUT r
