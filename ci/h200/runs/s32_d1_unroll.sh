#!/usr/bin/env bash
# Session 32, call 1 (H200, $OUT set): does the TMA thread's K-loop unroll move the single-tile
# N = 4096 shapes (the thirty-first session's code-layout lead)? The shipped kernels (.devx/base,
# ptxas unrolls that loop 4x) against explicit `#pragma unroll` 1, 2 (the layout that measured
# 4-9% slower) and 8 (-DBLOCKFP8_PRODUCER_UNROLL), and the store warp waiting only on the next
# tile's blocks that exist (-DBLOCKFP8_STORE_WAIT_SIMPLE, the 128x192 s4 / 128x256 s3 tiles),
# four interleaved rounds of `blockfp8 bench`; the store-wait build checked against the CPU
# reference first on short-K shapes whose next tiles have fewer than 8 K blocks.
set -u
R=$OUT/r; mkdir -p $R
V="base u1 u2 u8 sw"
for v in $V; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $R/gpu.txt
timeout 120 .devx/sw/blockfp8 bench --backend cuda --no-progress --json --scale-layout column-major \
  --mnk 2048,4608,512 --mnk 1024,2112,768 --mnk 2048,7168,384 --mnk 1536,24576,256 > $R/sw_check.json 2>$R/sw_check.err; echo "sw check rc=$?"
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,18432,7168 --mnk 64,32768,512 --mnk 128,24576,1536 --mnk 8,4096,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048"
for r in 1 2 3 4; do
  for v in $V; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
for v in u1 u2 u8 sw; do
  echo "== $v over base"
  python3 ci/h200/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json,$R/base_4.json $R/${v}_1.json,$R/${v}_2.json,$R/${v}_3.json,$R/${v}_4.json | tee $R/ab_$v.md | grep -E "tuned|geomean"
done
python3 - $R <<'PY'
import json, sys
d = json.load(open(f"{sys.argv[1]}/sw_check.json"))
for s in d["shapes"]:
    print("sw check", s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("calc_diff")) for x in s["measurements"]])
PY
tar czf $OUT/r.tgz -C $OUT r
