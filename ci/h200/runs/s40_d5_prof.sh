#!/usr/bin/env bash
# Session 40, device call 5: why the Stream-K build runs 10% more cycles at 4096x2112x7168 with
# Stream-K off (call 4): ncu --set full of one launch each, the shipped CLI and the Stream-K
# CLI under BLOCKFP8_STREAM_K=0, with the per-SASS-instruction source page (executed counts).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
xz -dkf .devx/s40sk/blockfp8.xz .devx/s40/blockfp8.xz && chmod +x .devx/s40sk/blockfp8 .devx/s40/blockfp8
for side in base off; do
  case $side in base) c=.devx/s40/blockfp8;; off) c=.devx/s40sk/blockfp8;; esac
  BLOCKFP8_STREAM_K=0 timeout 200 $NCU --set full --import-source no --kernel-name "regex:sm90_gemm_block_fp8_m128n192" --launch-count 1 -o $R/rep_$side \
    $c bench --backend cuda --mnk 4096,2112,7168 --scale-layout column-major --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/ncu_$side.log 2>&1
  echo "ncu $side rc=$?"
  $NCU -i $R/rep_$side.ncu-rep --page source --csv --print-source sass > $R/sass_$side.csv 2>&1
  $NCU -i $R/rep_$side.ncu-rep --page details > $R/details_$side.txt 2>&1
  rm -f $R/rep_$side.ncu-rep
done
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
