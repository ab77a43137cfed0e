#!/bin/bash
# SASS of the clustered 128x128 kernels in the staged cubins: QGMMA and multicast TMA counts.
B=.device-bin
CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
echo "cuobjdump: $CUOBJDUMP"
for c in $B/gemm_block_fp8_*_sm_90a.cubin; do $CUOBJDUMP --dump-sass $c 2>&1; done > $OUT/sass_all.txt
grep -n "Function" $OUT/sass_all.txt | grep c2 | head
for k in m128n128w8s6c2_bf16 m128n128w8s6_bf16; do
  awk -v k="$k" '/Function :/{f = index($0, k" ") || substr($0, length($0)-length(k)+1) == k} f' $OUT/sass_all.txt > $OUT/sass_$k.txt
  echo "$k: $(wc -l < $OUT/sass_$k.txt) lines, $(grep -c QGMMA $OUT/sass_$k.txt) QGMMA ($(grep -o 'QGMMA[.0-9x]*' $OUT/sass_$k.txt | sort -u | tr '\n' ' ')), $(grep -c 'MULTICAST' $OUT/sass_$k.txt) multicast TMA, $(grep -cE 'LDL|STL' $OUT/sass_$k.txt) LDL/STL"
  grep -E "UTMALDG" $OUT/sass_$k.txt | head -3
done
rm -f $OUT/sass_all.txt
