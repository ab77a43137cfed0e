#!/usr/bin/env bash
# Session 30, call 3 (H200, $OUT set): ncu --set full of one launch each of the crate's kernel
# (7d7906a's, the shipped build staged as .device-bin) and DeepGEMM's, at 128x4096x7168 (same
# 64x64 tile, DeepGEMM 5% faster in the race of record) and 4096x24576x1536 (4% faster).
set -u
R=$OUT/r; mkdir -p $R
B=.device-bin
OUT=$R bash $B/profile.sh 128,4096,7168 sm90_gemm_block_fp8_m64n64 small --scale-layout column-major
OUT=$R bash $B/profile.sh 4096,24576,1536 sm90_gemm_block_fp8_m128n256 shortk --scale-layout column-major
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?"
export PYTHONPATH=/tmp/dgb/dg:$PWD/$B:${PYTHONPATH:-}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for s in 128,4096,7168:small 4096,24576,1536:shortk; do
  mnk=${s%%:*}; tag=dg_${s##*:}
  python3 $B/deepgemm_time.py --warm $mnk > /dev/null 2>&1
  timeout 200 "$NCU" --set full --clock-control none --import-source no --kernel-name "regex:sm90_fp8_gemm_1d2d" --launch-count 1 -o "$R/rep_$tag" \
    python3 $B/deepgemm_time.py --json $R/$tag.json --mnk $mnk > "$R/ncu_$tag.log" 2>&1; echo "$tag ncu rc=$?"
  "$NCU" -i "$R/rep_$tag.ncu-rep" --page source --csv --print-source sass > "$R/sass_$tag.csv" 2>&1 || true
  "$NCU" -i "$R/rep_$tag.ncu-rep" --page details > "$R/details_$tag.txt" 2>&1 || true
  rm -f "$R/rep_$tag.ncu-rep"
done
for f in $R/details_*.txt; do echo "== $f"; grep -E "^\s+(Duration|Elapsed Cycles|SM Frequency|Executed Instructions |Issue Slots Busy|Registers Per Thread|Block Size|Grid Size|DRAM Throughput|Warp Cycles Per Issued Instruction|Achieved Occupancy)" $f | head -14; done
tar czf $OUT/r.tgz -C $OUT r
