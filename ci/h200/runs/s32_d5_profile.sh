#!/usr/bin/env bash
# Session 32, call 5 (H200, $OUT set): why DeepGEMM's scale scheme (a stage's activation scales by
# TMA, the weight scales once per tile) runs 0.79x on our 64x32 s12 at 64x4096x7168: ncu --set
# full of one launch each of the shipped kernel (.devx/base, per-tile slabs) and call 4's
# variant (.devx/ota2, 9e0da64 with -DBLOCKFP8_ONE_AS_TMA -DBLOCKFP8_ONE_AS_TMA2), column-major.
set -u
R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for v in base ota2; do
  xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8
  timeout 200 "$NCU" --set full --clock-control none --import-source no --kernel-name "regex:sm90_gemm_block_fp8_m64n32" --launch-count 1 -o "$R/rep_$v" \
    .devx/$v/blockfp8 bench --backend cuda --mnk 64,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major > "$R/ncu_$v.log" 2>&1; echo "$v ncu rc=$?"
  "$NCU" -i "$R/rep_$v.ncu-rep" --page source --csv --print-source sass > "$R/sass_$v.csv" 2>&1 || true
  "$NCU" -i "$R/rep_$v.ncu-rep" --page details > "$R/details_$v.txt" 2>&1 || true
  rm -f "$R/rep_$v.ncu-rep"
done
for f in $R/details_*.txt; do echo "== $f"; grep -E "^\s+(Duration|Elapsed Cycles|SM Active Cycles|SM Frequency|Executed Instructions |DRAM Throughput|L2 Hit Rate|Mem Busy|Max Bandwidth)" $f | head -12; done
tar czf $OUT/r.tgz -C $OUT r
