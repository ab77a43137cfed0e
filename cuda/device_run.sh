#!/bin/bash
# Runs the CUDA tests and the benchmark on the device machine from .device-bin/ (binaries
# built on the CPU machine). Usage: bash .device-bin/device_run.sh [tests|bench|all]
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
B=.device-bin
what=${1:-all}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee $OUT/gpu.txt
date -u >> $OUT/gpu.txt
if command -v cuobjdump >/dev/null || [ -x /usr/local/cuda/bin/cuobjdump ]; then
  CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  ls $B/*.cubin >/dev/null 2>&1 || CUOBJ=true  # no cubins carried: skip the SASS dump
  for c in $B/*.cubin; do
    echo "== $c"; $CUOBJ --dump-sass $c | grep -oE "\b(HMMA|QGMMA|HGMMA|IMMA|FFMA|LDSM|LDGSTS|LDL|STL|UTMALDG|USETMAXREG|SYNCS|BAR)[A-Z0-9_.]*" | sort | uniq -c
  done > $OUT/sass_summary.txt 2>&1
  for c in $B/gemm_block_fp8_*_sm_90a.cubin; do $CUOBJ --dump-sass $c; done | awk -v k=${SASS_KERNEL:-m128n128w8s6_bf16} '$0 ~ ("Function : sm90_gemm_block_fp8_" k){f=1; print; next} f&&/Function : /{f=0} f' > $OUT/sass_default_bf16.txt; grep -cE "QGMMA" $OUT/sass_default_bf16.txt > $OUT/sass_default_qgmma_count.txt; grep -E "QGMMA|HMMA|LDL|STL|UTMALDG|USETMAXREG|SYNCS|BAR" $OUT/sass_default_bf16.txt | head -40 > $OUT/sass_default_excerpt.txt
fi
T=$(ls $B/cuda-* | head -1)
if [ "$what" = tests ] || [ "$what" = all ]; then
  # The GPU tests are #[ignore]d (they fail, not pass, without a GPU): include them here.
  timeout ${TEST_TIMEOUT:-280} $T --include-ignored --skip anchor_benchmark --test-threads 4 --nocapture > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
  grep -E "^test |test result|panicked|calc_diff|rc=" $OUT/tests.log | tail -30
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout ${BENCH_TIMEOUT:-280} $T --ignored anchor_benchmark --nocapture > $OUT/bench.log 2>&1; echo "bench rc=$?" >> $OUT/bench.log
  cat $OUT/bench.md 2>/dev/null || tail -20 $OUT/bench.log
fi
