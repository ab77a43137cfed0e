#!/usr/bin/env bash
# Session 28, call 5 (H200, $OUT set; .device-bin staged from db89242, as raced in call 4):
# (1) the per-instruction ncu profile of 128x256 s3 at 4096x24576x1536 again, to see how much
#     of call 2's data waiting is left with the later C stores;
# (2) the large-M shapes with the activation scales column-major (the layout DeepGEMM is given)
#     against row-major, two interleaved rounds, through the shipped configs.
set -u
R=$OUT/r; mkdir -p $R
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
timeout 150 $NCU --set full --clock-control none --import-source no --kernel-name "regex:sm90_gemm_block_fp8_m128n256w8s3_" --launch-skip 3 --launch-count 1 -o $R/rep_short .device-bin/blockfp8 bench --backend cuda --mnk 4096,24576,1536 --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress > $R/ncu_short.log 2>&1; echo "ncu rc=$?"
$NCU -i $R/rep_short.ncu-rep --page source --csv --print-source sass > $R/sass_short.csv 2>&1
$NCU -i $R/rep_short.ncu-rep --page details > $R/details_short.txt 2>&1; rm -f $R/rep_short.ncu-rep
grep -E "^    (Duration|Elapsed Cycles|SM Frequency)" $R/details_short.txt | head -3
S="--mnk 1024,4096,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 --mnk 4096,24576,1536 --mnk 4096,2112,7168 --mnk 4096,7168,2048 --mnk 1024,18432,7168"
for r in 1 2; do
  timeout 90 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json $S > $R/row_$r.json 2> $R/row_$r.err; echo "$r row rc=$?"
  timeout 90 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/col_$r.json 2> $R/col_$r.err; echo "$r col rc=$?"
done
python3 ci/h200/ab_compare.py $R/row_1.json,$R/row_2.json $R/col_1.json,$R/col_2.json | tee $R/ab_col.md | grep -E "tuned|geomean"
tar czf $OUT/r.tgz -C $OUT r
