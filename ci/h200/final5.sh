#!/bin/bash
# Default build (what `cargo test --features cuda` compiles, shipped config tiles included):
# all GPU tests, `blockfp8 bench` of the 16 anchor shapes through the shipped configs (tuned
# vs kernel default vs cuBLASLt), and the SASS of the clustered 128x128 kernel (QGMMA count,
# the multicast TMA load).
B=.device-bin; T=$(ls $B/cuda-* | head -1)
date -u > $OUT/dates.txt
timeout 150 $T --test-threads 4 > $OUT/tests.log 2>&1; echo "tests rc=$?" >> $OUT/tests.log
grep -E "test result|panicked|rc=|FAIL" $OUT/tests.log | head -5
date -u >> $OUT/dates.txt
timeout 200 $B/blockfp8 bench --backend cuda --mnk 8,4096,7168 --mnk 8,7168,18432 --mnk 8,18432,7168 --mnk 64,4096,7168 --mnk 64,7168,18432 --mnk 64,18432,7168 --mnk 64,24576,1536 --mnk 64,32768,512 --mnk 64,7168,16384 --mnk 128,4096,7168 --mnk 128,7168,18432 --mnk 128,18432,7168 --mnk 1024,4096,7168 --mnk 1024,18432,7168 --mnk 2048,4096,7168 --mnk 4096,4096,7168 > $OUT/cli_bench.md 2>&1; echo "rc=$?" >> $OUT/cli_bench.md
date -u >> $OUT/dates.txt
CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
for c in $B/gemm_block_fp8_*_sm_90a.cubin; do $CUOBJDUMP --dump-sass $c; done > $OUT/sass_all.txt 2>&1
awk '/Function : sm90_gemm_block_fp8_m128n128w8s6c2_bf16/{f=1} /Function : /{if(!/c2_bf16/)f=0} f' $OUT/sass_all.txt > $OUT/sass_c2.txt
echo "c2 kernel: $(grep -c QGMMA $OUT/sass_c2.txt) QGMMA, $(grep -c 'UTMALDG.2D.MULTICAST' $OUT/sass_c2.txt) multicast TMA loads, $(grep -cE 'LDL|STL' $OUT/sass_c2.txt) local loads/stores"
rm -f $OUT/sass_all.txt
grep -E "Average speedup|^\| (tuned|kernel default|vendor) " $OUT/cli_bench.md
