#!/bin/bash
# A/B of two default builds of the test binary, staged as .device-bin/cuda-ordered and
# .device-bin/cuda-free (e.g. built with BLOCKFP8_NVCC_FLAGS=-DSOME_SWITCH=0 and =1), with the
# cubins of the first for the SASS check: tests with the first, then the large-M anchors
# without the sweep, alternating builds over two rounds.
B=.device-bin
CO=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for c in $B/*.cubin; do $CO --dump-sass $c; done | awk '$0 ~ "Function : sm90_gemm_block_fp8_m128n128w8s6_bf16"{f=1; print; next} f&&/Function : /{f=0} f' > $OUT/sass_m128.txt
grep -oE "\b(QGMMA|BAR|WARPGROUP|LDL|STL)[A-Z0-9_.]*" $OUT/sass_m128.txt | sort | uniq -c | tee $OUT/sass_m128_summary.txt
date -u > $OUT/dates.txt
timeout 150 $B/cuda-ordered --test-threads 4 > $OUT/tests_ordered.log 2>&1; echo "tests rc=$?" >> $OUT/tests_ordered.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests_ordered.log
S=1024x4096x7168,1024x18432x7168,2048x4096x7168,4096x4096x7168
for r in 1 2; do for v in ordered free; do
  date -u >> $OUT/dates.txt
  BLOCKFP8_BENCH_SWEEP=0 BLOCKFP8_BENCH_SHAPES=$S BLOCKFP8_BENCH_OUT=$OUT/bench_${v}_$r.md timeout 100 $B/cuda-$v --ignored bench > $OUT/bench_${v}_$r.log 2>&1
  echo "== $v round $r"; grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench_${v}_$r.md | cut -d'|' -f2-4,6,8,9,10
done; done
