#!/bin/bash
# Diagnosis run: the GPU tests, the anchor bench on chosen rows, then ncu (clocks unlocked)
# with warp-stall statistics on the GEMM kernels of a small-M and a large-M shape. Staged as ci/h200/README.md says; run from the repo root on the
# H200 with $OUT set.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
SHAPES=${SHAPES:-64x24576x1536,64x32768x512}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
if [ -n "${TESTS:-1}" ]; then
  timeout ${TEST_TIMEOUT:-150} $T --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
  grep -E "test result|panicked|FAILED|rc=" $OUT/tests.log | tail -8
fi
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_SHAPES=$SHAPES BLOCKFP8_BENCH_OUT=$OUT/bench.md \
  timeout ${BENCH_TIMEOUT:-150} $T --ignored bench --nocapture > $OUT/bench.log 2>&1; echo "rc=$?" >> $OUT/bench.log
sed -n '1,/^$/p;/^| M /,/^$/p' $OUT/bench.md 2>/dev/null | head -30 || tail -5 $OUT/bench.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || exit 0
i=0
for spec in ${NCU_SPECS:-64,32768,512:m32n64w4s3 4096,4096,7168:m128n128w8s6}; do
  mnk=${spec%%:*}; kern=${spec##*:}; i=$((i+1))
  timeout 150 $NCU --clock-control none --kernel-name regex:$kern --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second \
    $B/blockfp8 bench --backend cuda --mnk $mnk --no-check --warmup 1 --repeats 1 --rounds 1 > $OUT/ncu_$i.txt 2>&1
  echo "ncu rc=$?" >> $OUT/ncu_$i.txt
  grep -E "sm90_gemm|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)|gmma|lsu_wavefronts|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" $OUT/ncu_$i.txt | head -14
done
