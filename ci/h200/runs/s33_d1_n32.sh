#!/usr/bin/env bash
# Session 33, call 1 (H200, $OUT set): a 128x32 tile with two consumer warpgroups (64x32 each,
# per-stage scale copies as the other two-consumer tiles), new to the TMA body (.devx/n32: the
# build with (128, 32, 8, 4/6/8/9) compiled), against the shipped 64x64 s8 at M = 96-128,
# N = 4096, K = 7168 (.devx/base: the shipped kernels). Each weight row is then read by one CTA.
# Checked against the CPU reference first (both scale layouts, ragged and several tiles per CTA),
# then four interleaved rounds, the tile forced through a config folder.
set -u
R=$OUT/r; mkdir -p $R
for v in base n32; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
mkcfg() {  # folder stages: every N,K below at M=128 on 128x32 s$2
  mkdir -p $1
  for nk in 4096,7168 520,1040 200,1536 4096,512 2112,7168; do
    n=${nk%,*}; k=${nk#*,}
    echo "{\"128\": {\"BLOCK_SIZE_M\": 128, \"BLOCK_SIZE_N\": 32, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 8, \"num_warps\": 8, \"num_stages\": $2, \"SPLIT_K\": 1}}" \
      > "$1/N=$n,K=$k,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
  done
}
for s in 4 6 8 9; do mkcfg $R/cfg$s $s; done
for l in column-major row-major; do
  for s in 4 8 9; do
    timeout 120 .devx/n32/blockfp8 bench --backend cuda --no-progress --json --scale-layout $l --config-dir $R/cfg$s \
      --mnk 128,4096,7168 --mnk 100,520,1040 --mnk 77,200,1536 --mnk 300,4096,7168 --mnk 128,4096,512 --mnk 3,2112,7168 > $R/check_${l}_s$s.json 2>/dev/null; echo "check $l s$s rc=$?"
  done
done
S="--mnk 128,4096,7168 --mnk 96,4096,7168 --mnk 128,2112,7168"
for r in 1 2 3 4; do
  timeout 100 .devx/base/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/base_$r.json 2>/dev/null; echo "$r base rc=$?"
  for s in 4 6 8 9; do
    timeout 100 .devx/n32/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major --config-dir $R/cfg$s $S > $R/s${s}_$r.json 2>/dev/null; echo "$r s$s rc=$?"
  done
done
L() { echo $R/$1_1.json,$R/$1_2.json,$R/$1_3.json,$R/$1_4.json; }
for s in 4 6 8 9; do echo "== 128x32 s$s against shipped"; python3 ci/h200/ab_compare.py $(L base) $(L s$s) | tee $R/ab_s$s.md | grep -E "tuned|geomean"; done
python3 - $R <<'PY'
import json, sys, glob
for f in sorted(glob.glob(f"{sys.argv[1]}/check_*.json")):
    for s in json.load(open(f))["shapes"]:
        print(f.split("/")[-1], s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), x.get("time_us"), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tar czf $OUT/r.tgz -C $OUT r
