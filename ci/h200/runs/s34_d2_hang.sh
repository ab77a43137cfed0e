#!/usr/bin/env bash
# Session 34, call 2 (H200, $OUT set). Call 1's tuner stalled at its third item (M=128,
# N=24576, K=1536) until its timeout: find the candidate. Every bf16 tile of .devx/rt (the list
# in s34_rt_tiles.json, the build of s34_rt.patch) alone at 128x24576x1536 through a one-entry
# config file, checked against the CPU reference, 10 s each; a tile that times out is tried
# again at M = 64, 96, 120 and 256 and with column-major scales. Then the 64x64 s13 entries
# call 1 found at M=64, N=7168, K=16384 / 18432 against the shipped s12 (column-major, 3 rounds).
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
xz -d -T4 .devx/rt/blockfp8.xz; chmod +x .devx/rt/blockfp8
X=.devx/rt/blockfp8
t0=$(date +%s)
one() {  # tile index, M, N, K, extra args -> rc
  local d=$R/cfg_$1_$2; mkdir -p $d
  python3 - "$1" "$2" "$3" "$4" "$d" <<'PY'
import json, sys
i, m, n, k, d = sys.argv[1:]
t = json.load(open("ci/h200/runs/s34_rt_tiles.json"))[int(i)]
json.dump({m: t}, open(f"{d}/N={n},K={k},device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json", "w"))
PY
  timeout 10 $X bench --backend cuda --config-dir $d --mnk $2,$3,$4 --warmup 1 --repeats 3 --rounds 1 --no-progress --json "${@:5}" > $R/b_$1_$2.json 2> $R/b_$1_$2.err
  echo $?
}
n=$(python3 -c "import json; print(len(json.load(open('ci/h200/runs/s34_rt_tiles.json'))))")
for i in $(seq 0 $((n - 1))); do
  [ $(( $(date +%s) - t0 )) -lt 300 ] || { echo "stopped at $i"; break; }
  rc=$(one $i 128 24576 1536)
  tile=$(python3 -c "import json; print(json.load(open('ci/h200/runs/s34_rt_tiles.json'))[$i])")
  echo "$i rc=$rc $tile"
  if [ "$rc" != 0 ]; then
    for m in 64 96 120 256; do echo "   M=$m rc=$(one $i $m 24576 1536)"; done
    echo "   M=128 column-major rc=$(one $i 128 24576 1536 --scale-layout column-major)"
    echo "   M=128 N=12288 rc=$(one $i 128 12288 1536)"
  fi
done
# 64x64 s13 against s12 at M = 64, N = 7168, K = 16384 / 18432.
for s in 12 13; do
  mkdir -p $R/s$s
  for k in 16384 18432; do
    echo "{\"64\": {\"BLOCK_SIZE_M\": 64, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 8, \"num_warps\": 4, \"num_stages\": $s, \"SPLIT_K\": 1}}" > "$R/s$s/N=7168,K=$k,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
  done
done
for r in 1 2 3; do
  for s in 12 13; do
    timeout 40 $X bench --backend cuda --config-dir $R/s$s --mnk 64,7168,16384 --mnk 64,7168,18432 --no-progress --no-check --json --scale-layout column-major > $R/s${s}_$r.json 2>/dev/null; echo "$r s$s rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
python3 ci/h200/ab_compare.py $R/s12_1.json,$R/s12_2.json,$R/s12_3.json $R/s13_1.json,$R/s13_2.json,$R/s13_3.json | grep -v kernel_default
rm -rf $R/cfg_*
cd $OUT && tar czf r.tgz r && rm -rf r
