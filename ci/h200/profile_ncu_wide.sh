#!/bin/bash
# ncu --set full + per-SASS stall samples of the first 128x192 and 128x128 launches at
# M=1024 N=18432 K=7168 in the anchor bench's sweep (tuning test binary staged as
# .device-bin/cuda-full). KERNELS="tile:tag ..." picks other tiles, NCU_SHAPE=MxNxK another shape.
B=.device-bin
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for kv in ${KERNELS:-"m128n192w8s5:wide" "m128n128w8s6:base"}; do
  k=${kv%:*}; tag=${kv#*:}
  BLOCKFP8_BENCH_SHAPES=${NCU_SHAPE:-1024x18432x7168} timeout ${NCU_TIMEOUT:-250} $NCU --set full --clock-control none --import-source no --kernel-name regex:sm90_gemm_block_fp8_${k}_bf16 --launch-count 1 -o $OUT/rep_$tag $B/cuda-full --ignored bench > $OUT/ncu_$tag.log 2>&1
  echo "ncu $tag rc=$?"
  $NCU -i $OUT/rep_$tag.ncu-rep --page source --csv --print-source sass > $OUT/sass_$tag.csv 2>&1 || true
  $NCU -i $OUT/rep_$tag.ncu-rep --page details > $OUT/details_$tag.txt 2>&1 || true
  rm -f $OUT/rep_$tag.ncu-rep
  grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Shared Memory|L2 Cache Throughput|Registers Per|Tensor" $OUT/details_$tag.txt | head -20
done
