#!/usr/bin/env bash
# Session 23, call 4 (H200, $OUT set; `bash ci/h200/stage.sh default`): dependent launches for
# split-K GEMMs and their conversion (BLOCKFP8_PDL=split), with the activation quantization and
# the conversion letting the next kernel launch at their start. The CUDA suite and the
# device-API suite under BLOCKFP8_PDL=split; the decode example (its step time: quantization +
# 3 GEMMs at M = 8) twice and `blockfp8 bench` of the 20 race shapes and 8 decode shapes once,
# each under 0 / on / split.
set -u
B=.device-bin
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
BLOCKFP8_PDL=split timeout 200 $B/cuda-default --include-ignored --skip anchor_benchmark --test-threads 4 > $R/cuda_tests_split.log 2>&1; echo "cuda PDL=split rc=$?" | tee -a $R/cuda_tests_split.log
grep -E "test result|panicked" $R/cuda_tests_split.log | head -4
BLOCKFP8_PDL=split BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 120 $B/device_api --test-threads 2 > $R/device_api_split.log 2>&1; echo "device_api PDL=split rc=$?" | tee -a $R/device_api_split.log
grep -E "test result|panicked" $R/device_api_split.log | head -4
shapes="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048 1,2112,7168 1,4608,7168 1,576,7168 8,2112,7168 8,4608,7168 8,576,7168 16,7168,2048 16,4096,7168"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
i=0
for round in 1 2; do
    for v in 0 on split; do
        BLOCKFP8_PDL=$v timeout 60 $B/cuda_decode_step > $R/decode_${v}_$round.log 2>/dev/null; grep -E "decode step|CHECKS" $R/decode_${v}_$round.log | sed "s/^/PDL=$v: /"
    done
done
for v in 0 on split; do
    i=$((i + 1))
    BLOCKFP8_PDL=$v timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json "${args[@]}" > $R/pdl_${v}_$i.json 2>> $R/pdl_bench.err
    echo "bench $i PDL=$v rc=$?"
done
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
