#!/usr/bin/env bash
# Session 23, call 1 (H200, $OUT set; `bash ci/h200/stage.sh default`, .peers carried): the TMA
# GEMM as a programmatic dependent launch. The device-API suite with CUDA required (its
# back-to-back test: quantization -> GEMM read after write, GEMM -> GEMM into one C), the CUDA
# suite, the decode example (graph capture), then the race with DeepGEMM (PDL on, the default)
# and the same bench of the 20 race shapes with BLOCKFP8_PDL=0 and =exit, interleaved.
set -u
B=.device-bin
R=$OUT/r; mkdir -p $R
date -u > $R/dates.txt
BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 240 $B/device_api --test-threads 2 > $R/device_api.log 2>&1; echo "device_api rc=$?" >> $R/device_api.log
grep -E "test result|panicked|FAILED|rc=" $R/device_api.log | head -8
timeout 240 $B/cuda-default --include-ignored --skip anchor_benchmark --test-threads 4 > $R/cuda_tests.log 2>&1; echo "cuda rc=$?" >> $R/cuda_tests.log
grep -E "test result|panicked|FAILED|rc=" $R/cuda_tests.log | head -8
RUST_LOG=blockfp8=debug timeout 60 $B/cuda_decode_step > $R/decode_step.log 2> $R/decode_step.err; echo "decode rc=$?"; tail -5 $R/decode_step.log
date -u >> $R/dates.txt
OUT=$R timeout 330 bash $B/race.sh > $R/race_run.log 2>&1; echo "race rc=$?"; tail -28 $R/race_run.log
date -u >> $R/dates.txt
shapes="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
for v in 0 exit on 0; do
    BLOCKFP8_PDL=$v timeout 150 $B/blockfp8 bench --backend cuda --no-progress --no-check --json "${args[@]}" > $R/pdl_${v}_$(date +%s).json 2>> $R/pdl_bench.err
    echo "bench PDL=$v rc=$?"
done
date -u >> $R/dates.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
