#!/usr/bin/env bash
# Session 37, device call 4: ncu (default base-clock control) of one launch of each kernel at
# 4096x2112x7168, the one race shape where DeepGEMM stays ahead paired: blockfp8's 128x192 s4
# (through the shipped configs, column-major scales) and DeepGEMM's 128x192 s4 weight-multicast
# pairs. Sections: speed of light, memory and compute workload, instruction stats, warp states.
R=$OUT; mkdir -p $R/n
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats"
bash .peers/build_deepgemm.sh > $R/n/dg_build.log 2>&1
timeout 100 $NCU $sec --kernel-name "regex:sm90_gemm_block_fp8" --launch-count 1 -o $R/n/ours \
  .device-bin/blockfp8 bench --backend cuda --mnk 4096,2112,7168 --scale-layout column-major --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/n/ours.log 2>&1
echo "ours rc=$?"
PYTHONPATH=/tmp/dgb/dg timeout 60 python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/n/dg_warm.log 2>&1
PYTHONPATH=/tmp/dgb/dg timeout 100 $NCU $sec --kernel-name "regex:fp8_gemm|sm90_fp8" --launch-count 1 -o $R/n/dg \
  python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/n/dg.log 2>&1
echo "dg rc=$?"
for t in ours dg; do $NCU -i $R/n/$t.ncu-rep --page details > $R/n/details_$t.txt 2>&1; done
rm -f $R/n/*.ncu-rep
tar czf $R/n.tgz -C $R n && rm -rf $R/n
