#!/usr/bin/env bash
# Session 42, device call 5: where the two kernels differ at 4096x2112x7168 beyond cycles.
# `ncu --set full` (ncu's fixed clock), one launch each: the shipped build (128x192 s4), the
# weight-multicast pairs with C deferred (call 4's dh build, forced), and DeepGEMM (built from
# the carried peers folder, timed by deepgemm_time.py). Details pages under $OUT.
set -u
: "${OUT:?}"; mkdir -p "$OUT"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
S=4096,2112,7168
bash .peers/build_deepgemm.sh > $OUT/dg_build.log 2>&1 || { echo "DeepGEMM build failed"; tail $OUT/dg_build.log; }
( export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-}; python3 ci/h200/deepgemm_time.py --warm $S ) > $OUT/dg_warm.log 2>&1 &
C=/tmp/cfgmc
python3 ci/h200/force_tile.py $C --tile m128n192w8s4c2 --group 8 --mnk $S > /dev/null
for v in s41ship s42dh; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
prof() {  # tag, kernel regex, skip, command...
  local tag=$1 kern=$2 skip=$3; shift 3
  timeout 240 "$NCU" --set full --import-source no --kernel-name "regex:$kern" --launch-skip "$skip" --launch-count 1 -o /tmp/rep_$tag "$@" > $OUT/ncu_$tag.log 2>&1
  echo "$tag ncu rc=$?"
  "$NCU" -i /tmp/rep_$tag.ncu-rep --page details > $OUT/details_$tag.txt 2>&1
  "$NCU" -i /tmp/rep_$tag.ncu-rep --page raw --csv > $OUT/raw_$tag.csv 2>&1
}
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major --mnk $S)
prof ours sm90_gemm_block_fp8_m 0 .devx/s41ship/blockfp8 "${bench[@]}"
prof pairs sm90_gemm_block_fp8_m 0 .devx/s42dh/blockfp8 "${bench[@]}" --config-dir $C
wait
PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} prof dg sm90_fp8_gemm_1d2d 2 python3 ci/h200/deepgemm_time.py --json /tmp/dg.json --mnk $S
for t in ours pairs dg; do
  echo "== $t"; grep -E "Duration|Elapsed Cycles|SM Active Cycles|L2 Cache Throughput|DRAM Throughput|Compute \(SM\) Throughput|Executed Ipc A|Issue Slots Busy|L1/TEX Hit|L2 Hit Rate|Mem Busy|Max Bandwidth|Warp Cycles Per Issued|Executed Instructions  " $OUT/details_$t.txt | head -20
done
