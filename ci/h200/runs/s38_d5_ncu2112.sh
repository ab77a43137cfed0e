#!/usr/bin/env bash
# Session 38, device call 5: ncu (default base-clock control, so cycles compare across builds) of
# one launch at 4096x2112x7168 of the 128x192 s4 tile in the shipped build (.device-bin/blockfp8,
# scales read before the wgmmas) and in the base build (75c5495, .devx/s38/base/blockfp8), then of
# DeepGEMM's kernel, as session 37's call 4 (s37_d4_ncu2112.sh).
R=$OUT; mkdir -p $R/n
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
sec="--section SpeedOfLight --section InstructionStats --section WarpStateStats --section LaunchStats --section SchedulerStats"
bash .peers/build_deepgemm.sh > $R/n/dg_build.log 2>&1 &
for t in new:.device-bin/blockfp8 base:.devx/s38/base/blockfp8; do
  timeout 90 $NCU $sec --kernel-name "regex:sm90_gemm_block_fp8" --launch-count 1 -o $R/n/${t%%:*} \
    ${t#*:} bench --backend cuda --mnk 4096,2112,7168 --scale-layout column-major --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/n/${t%%:*}.log 2>&1
  echo "${t%%:*} rc=$?"
done
wait
PYTHONPATH=/tmp/dgb/dg timeout 60 python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/n/dg_warm.log 2>&1
PYTHONPATH=/tmp/dgb/dg timeout 90 $NCU $sec --kernel-name "regex:fp8_gemm|sm90_fp8" --launch-count 1 -o $R/n/dg \
  python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/n/dg.log 2>&1
echo "dg rc=$?"
for t in new base dg; do [ -f $R/n/$t.ncu-rep ] && $NCU -i $R/n/$t.ncu-rep --page details > $R/n/details_$t.txt 2>&1; done
rm -f $R/n/*.ncu-rep
for t in new base dg; do echo "== $t"; grep -E "Elapsed Cycles|SM Frequency|Duration|Executed Instructions  |Warp Cycles Per Issued|Issued Warp Per|Active Warps Per" $R/n/details_$t.txt 2>/dev/null | head -8; done
tar czf $R/n.tgz -C $R n && rm -rf $R/n
