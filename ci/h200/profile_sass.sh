#!/bin/bash
# ncu --set full on one GEMM kernel launch of `blockfp8 bench`, then the per-SASS-instruction
# source page (warp-stall samples per instruction) as CSV. Usage (on the H200, $OUT set):
#   [CLI=blockfp8-variant] bash .device-bin/profile_sass.sh M,N,K KERNEL_REGEX TAG [extra bench args]
B=.device-bin; mnk=$1; kern=$2; tag=$3; shift 3
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu"; exit 0; }
timeout 200 $NCU --set full --clock-control none --import-source no --kernel-name regex:$kern --launch-count 1 -o $OUT/rep_$tag \
  $B/${CLI:-blockfp8} bench --backend cuda --mnk $mnk --no-check --warmup 1 --repeats 1 --rounds 1 "$@" > $OUT/ncu_$tag.log 2>&1
echo "ncu rc=$?" >> $OUT/ncu_$tag.log
$NCU -i $OUT/rep_$tag.ncu-rep --page source --csv --print-source sass > $OUT/sass_$tag.csv 2>&1 || true
$NCU -i $OUT/rep_$tag.ncu-rep --page details > $OUT/details_$tag.txt 2>&1 || true
rm -f $OUT/rep_$tag.ncu-rep
wc -c $OUT/sass_$tag.csv $OUT/details_$tag.txt
