#!/usr/bin/env bash
# Session 24, call 9 (H200, $OUT set; .device-bin staged): the per-instruction stall samples of the
# 128x256 s3 tile at 4096x24576x1536 (ncu --set full, source page as SASS CSV), where call 7 found
# 10% more instructions than DeepGEMM's and 2.3x its long-scoreboard stall samples.
set -u
bash .device-bin/profile.sh 4096,24576,1536 sm90_gemm_block_fp8_m128n256w8s3 short_k
gzip -9 $OUT/sass_short_k.csv $OUT/details_short_k.txt
ls -la $OUT
