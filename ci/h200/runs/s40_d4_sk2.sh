#!/usr/bin/env bash
# Session 40, device call 4: the Stream-K build again, its pieces flagged by one release per warp (no fence per lane) and the finisher reading its slots eight loads at a time.
# 1. the GPU tests of the Stream-K build (all, the new stream_k test included);
# 2. ncu cycles at its fixed clock: the shipped CLI, the Stream-K CLI with BLOCKFP8_STREAM_K=0
#    and with it on, at 4096x2112x7168 and 1024x18432x7168 (the 128x192 race shapes) and
#    4096x4096x7168 (128x256 s4: no Stream-K, a control of the item-loop change);
# 3. paired against DeepGEMM: shipped library (A) against the Stream-K library (B), 2 passes.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
xz -dkf .devx/s40sk/blockfp8.xz .devx/s40sk/cuda_tests.xz .devx/s40/blockfp8.xz && chmod +x .devx/s40sk/blockfp8 .devx/s40sk/cuda_tests .devx/s40/blockfp8
(bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log) &
bpid=$!
timeout 300 .devx/s40sk/cuda_tests --include-ignored --skip anchor_benchmark --test-threads 4 > $R/tests.log 2>&1; echo "tests rc=$?" | tee -a $R/tests.log
grep -E "test result|panicked|FAILED" $R/tests.log | head
for s in 4096,2112,7168 1024,18432,7168 4096,4096,7168; do
  for r in 1; do
    for side in base off on; do
      case $side in base) c=.devx/s40/blockfp8; e=1;; off) c=.devx/s40sk/blockfp8; e=0;; on) c=.devx/s40sk/blockfp8; e=1;; esac
      BLOCKFP8_STREAM_K=$e timeout 120 $NCU --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,smsp__inst_executed.sum --csv \
        --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 2 $c bench --backend cuda --mnk $s --scale-layout column-major --no-check \
        --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/ncu_${s//,/x}_$side.$r.csv 2>&1
      echo "ncu $s $side $r rc=$?"
    done
  done
done
wait $bpid; tail -1 $R/dg_build.log
OUT=$R/pab LIB_A=.devx/s40/libblockfp8_capi.so LIB_B=.devx/s40sk/libblockfp8_capi.so PASSES=2 bash ci/h200/paired_ab.sh 4096,2112,7168 1024,18432,7168 4096,4096,7168 2>&1 | tail -12
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
