#!/usr/bin/env bash
# Session 24, call 7 (H200, $OUT set; .device-bin staged, .peers carried): ncu --set full of one
# launch each, ours and DeepGEMM's (each alone in its process, as the race of record times it), at
# the two large-M gaps of the race of record: 4096x24576x1536 (ours 128x256 s3, 9% behind) and
# 4096x4096x7168 (128x256 s4, 5% behind). Details pages and raw CSVs in r.tgz.
set -u
FINAL_OUT=$OUT; OUT=/tmp/rn; rm -rf $OUT; mkdir -p $OUT
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
( bash .peers/build_deepgemm.sh > $OUT/dg_build.log 2>&1 ) &
dgb=$!
prof() { local tag=$1 kern=$2; shift 2; timeout 150 $NCU --set full --clock-control none --import-source no --kernel-name "regex:$kern" --launch-skip 3 --launch-count 1 -o $OUT/rep_$tag "$@" > $OUT/ncu_$tag.log 2>&1; echo "$tag rc=$?"
  $NCU -i $OUT/rep_$tag.ncu-rep --page details > $OUT/details_$tag.txt 2>&1; $NCU -i $OUT/rep_$tag.ncu-rep --page raw --csv > $OUT/raw_$tag.csv 2>&1; rm -f $OUT/rep_$tag.ncu-rep; }
prof ours_short sm90_gemm_block_fp8_m128n256w8s3 .device-bin/blockfp8 bench --backend cuda --mnk 4096,24576,1536 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
prof ours_long sm90_gemm_block_fp8_m128n256w8s4 .device-bin/blockfp8 bench --backend cuda --mnk 4096,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
wait $dgb
export PYTHONPATH=/tmp/dgb/dg
prof dg_short fp8_gemm python3 .device-bin/deepgemm_time.py --json /tmp/x.json --mnk 4096,24576,1536
prof dg_long fp8_gemm python3 .device-bin/deepgemm_time.py --json /tmp/x.json --mnk 4096,4096,7168
cd $OUT && tar czf $FINAL_OUT/r.tgz *
