#!/usr/bin/env bash
# Session 33, call 2 (H200, $OUT set): is the one-consumer tiles' K loop, unrolled over a whole
# turn of the ring (RingPos: 8-12 copies of the block, 9-10 KB of code), what keeps deeper rings
# from paying at M = 64-128, N = 4096? Builds: .devx/base (shipped kernels), .devx/deep (the same
# plus 64x64 s10 / s11), .devx/dyn (deep, and -DBLOCKFP8_DYN_RING: one-consumer tiles walk the
# ring by a runtime stage, one loop body). Checked against the CPU reference first, then four
# interleaved rounds: the tuned entries, and 64x64 s8 / s10 / s11 forced by config folders.
set -u
R=$OUT/r; mkdir -p $R
for v in base deep dyn; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
mkcfg() {  # folder stages: N=4096 K=7168 and the check shapes' N,K on 64x64 s$2
  mkdir -p $1
  for nk in 4096,7168 520,1040 200,1536; do
    n=${nk%,*}; k=${nk#*,}
    echo "{\"64\": {\"BLOCK_SIZE_M\": 64, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 8, \"num_warps\": 4, \"num_stages\": $2, \"SPLIT_K\": 1}}" \
      > "$1/N=$n,K=$k,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
  done
}
for s in 8 10 11; do mkcfg $R/cfg$s $s; done
C="--mnk 64,4096,7168 --mnk 100,520,1040 --mnk 300,4096,7168 --mnk 77,200,1536 --mnk 128,2112,7168 --mnk 64,7168,16384"
for l in column-major row-major; do
  timeout 120 .devx/dyn/blockfp8 bench --backend cuda --no-progress --json --scale-layout $l $C > $R/check_dyn_$l.json 2>/dev/null; echo "check dyn $l rc=$?"
  for s in 10 11; do for v in deep dyn; do
    timeout 120 .devx/$v/blockfp8 bench --backend cuda --no-progress --json --scale-layout $l --config-dir $R/cfg$s \
      --mnk 128,4096,7168 --mnk 100,520,1040 --mnk 77,200,1536 --mnk 300,4096,7168 > $R/check_${v}_s${s}_$l.json 2>/dev/null; echo "check $v s$s $l rc=$?"
  done; done
done
S="--mnk 64,4096,7168 --mnk 96,4096,7168 --mnk 128,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,7168,18432 --mnk 128,2112,7168"
F="--mnk 96,4096,7168 --mnk 128,4096,7168"
for r in 1 2 3 4; do
  for v in base dyn; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
  for v in deep dyn; do for s in 8 10 11; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major --config-dir $R/cfg$s $F > $R/${v}s${s}_$r.json 2>/dev/null; echo "$r $v s$s rc=$?"
  done; done
done
L() { echo $R/$1_1.json,$R/$1_2.json,$R/$1_3.json,$R/$1_4.json; }
echo "== dyn against shipped (tuned entries)"; python3 ci/h200/ab_compare.py $(L base) $(L dyn) | tee $R/ab_dyn.md | grep -E "tuned|geomean"
for s in 10 11; do echo "== deep: s$s against s8"; python3 ci/h200/ab_compare.py $(L deeps8) $(L deeps$s) | tee $R/ab_deep_s$s.md | grep -E "tuned|geomean"; done
for s in 8 10 11; do echo "== dyn s$s against deep s8"; python3 ci/h200/ab_compare.py $(L deeps8) $(L dyns$s) | tee $R/ab_dyn_s$s.md | grep -E "tuned|geomean"; done
python3 - $R <<'PY' | tee $R/checks.txt
import json, sys, glob
for f in sorted(glob.glob(f"{sys.argv[1]}/check_*.json")):
    for s in json.load(open(f))["shapes"]:
        print(f.split("/")[-1], s["m"], s["n"], s["k"], [(x["implementation"], x.get("config", ""), round(x.get("time_us", 0), 2), x.get("calc_diff")) for x in s["measurements"] if x["implementation"] in ("tuned", "kernel_default")])
PY
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
