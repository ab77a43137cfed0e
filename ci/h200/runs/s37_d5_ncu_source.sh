#!/usr/bin/env bash
# Session 37, device call 5: ncu's per-instruction source counters (executed instructions and
# warp-stall samples per SASS instruction) of one launch of each kernel at 4096x2112x7168, to
# attribute the crate's 10% more warp instructions (call 4) to warp roles.
R=$OUT; mkdir -p $R/s
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
sec="--section SourceCounters --section WarpStateStats --import-source no"
( bash .peers/build_deepgemm.sh > $R/s/dg_build.log 2>&1; PYTHONPATH=/tmp/dgb/dg timeout 60 python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/s/dg_warm.log 2>&1 ) &
timeout 80 $NCU $sec --kernel-name "regex:sm90_gemm_block_fp8" --launch-count 1 -o $R/s/ours \
  .device-bin/blockfp8 bench --backend cuda --mnk 4096,2112,7168 --scale-layout column-major --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/s/ours.log 2>&1
echo "ours rc=$?"
wait
PYTHONPATH=/tmp/dgb/dg timeout 80 $NCU $sec --kernel-name "regex:sm90_fp8_gemm" --launch-count 1 -o $R/s/dg \
  python3 ci/h200/deepgemm_time.py --warm 4096,2112,7168 > $R/s/dg.log 2>&1
echo "dg rc=$?"
for t in ours dg; do $NCU -i $R/s/$t.ncu-rep --page source --csv --print-source sass > $R/s/sass_$t.csv 2>&1; done
rm -f $R/s/*.ncu-rep
tar czf $R/s.tgz -C $R s && rm -rf $R/s
