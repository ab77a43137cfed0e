#!/bin/bash
# Smoke test, an ncu look at the default large-M kernel (if ncu exists and counters are allowed), then tests + bench.
B=.device-bin; T=$(ls $B/cuda-* | head -1)
timeout 60 $T every_compiled_config --nocapture > $OUT/smoke.log 2>&1; echo "smoke rc=$?" >> $OUT/smoke.log; tail -3 $OUT/smoke.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" > $OUT/ncu.txt
if [ -n "$NCU" ]; then
  timeout 100 $NCU --kernel-name regex:sm90_gemm_block_fp8_m128n128w8s6 --launch-count 1 --section SpeedOfLight --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex.sum.pct_of_peak_sustained_elapsed $B/blockfp8 bench --backend cuda --mnk 4096,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 >> $OUT/ncu.txt 2>&1; echo "ncu rc=$?" >> $OUT/ncu.txt
fi
tail -40 $OUT/ncu.txt
TEST_TIMEOUT=150 BENCH_TIMEOUT=200 bash $B/device_run.sh all
