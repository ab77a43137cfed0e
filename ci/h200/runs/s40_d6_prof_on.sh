#!/usr/bin/env bash
# Session 40, device call 6: where the Stream-K build spends its cycles at 4096x2112x7168 with Stream-K on,
# beside it off (the build of call 4, s40_streamk_v1.patch): ncu --set full of one launch each,
# with the per-SASS-instruction source page (executed counts, stall samples).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
xz -dkf .devx/s40sk/blockfp8.xz && chmod +x .devx/s40sk/blockfp8
for side in on off; do
  case $side in on) e=1;; off) e=0;; esac; c=.devx/s40sk/blockfp8
  BLOCKFP8_STREAM_K=$e timeout 200 $NCU --set full --import-source no --kernel-name "regex:sm90_gemm_block_fp8_m128n192" --launch-count 1 -o $R/rep_$side \
    $c bench --backend cuda --mnk 4096,2112,7168 --scale-layout column-major --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/ncu_$side.log 2>&1
  echo "ncu $side rc=$?"
  $NCU -i $R/rep_$side.ncu-rep --page source --csv --print-source sass > $R/sass_$side.csv 2>&1
  $NCU -i $R/rep_$side.ncu-rep --page details > $R/details_$side.txt 2>&1
  rm -f $R/rep_$side.ncu-rep
done
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
