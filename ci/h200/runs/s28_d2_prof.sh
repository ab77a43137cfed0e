#!/usr/bin/env bash
# Session 28, call 2 (H200, $OUT set; .devx/head = the CLI of eac6e31, whose kernels are
# 14239a9's; .peers carried): per-SASS-instruction stall samples and executed-instruction
# counts (ncu --set full, source page) of one launch each: ours at 4096x24576x1536 (128x256 s3),
# 4096x4096x7168 (128x256 s4) and 64x4096x7168 (64x32 s12), DeepGEMM at 4096x24576x1536 and
# 64x4096x7168.
set -u
R=$OUT/r; mkdir -p $R
xz -d -T4 .devx/head/*.xz; chmod +x .devx/head/*
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log ) &
dgb=$!
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
prof() { local tag=$1 kern=$2; shift 2
  timeout 150 $NCU --set full --clock-control none --import-source no --kernel-name "regex:$kern" --launch-skip 3 --launch-count 1 -o $R/rep_$tag "$@" > $R/ncu_$tag.log 2>&1; echo "$tag ncu rc=$?"
  $NCU -i $R/rep_$tag.ncu-rep --page source --csv --print-source sass > $R/sass_$tag.csv 2>&1
  $NCU -i $R/rep_$tag.ncu-rep --page details > $R/details_$tag.txt 2>&1
  $NCU -i $R/rep_$tag.ncu-rep --page raw --csv > $R/raw_$tag.csv 2>&1; rm -f $R/rep_$tag.ncu-rep; }
prof short sm90_gemm_block_fp8_m128n256w8s3_ .devx/head/blockfp8 bench --backend cuda --mnk 4096,24576,1536 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
prof long sm90_gemm_block_fp8_m128n256w8s4_ .devx/head/blockfp8 bench --backend cuda --mnk 4096,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
prof small sm90_gemm_block_fp8_m64n32w4s12_ .devx/head/blockfp8 bench --backend cuda --mnk 64,4096,7168 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress
wait $dgb; tail -1 $R/dg_build.log
export PYTHONPATH=/tmp/dgb/dg
prof dg_short fp8_gemm python3 ci/h200/deepgemm_time.py --json /tmp/x.json --mnk 4096,24576,1536
prof dg_small fp8_gemm python3 ci/h200/deepgemm_time.py --json /tmp/x.json --mnk 64,4096,7168
for t in short long small dg_short dg_small; do
  echo "== $t"; grep -E "^    (Duration|Elapsed Cycles|SM Frequency)" $R/details_$t.txt | head -3; wc -c < $R/sass_$t.csv
done
tar czf $OUT/r.tgz -C $OUT r
