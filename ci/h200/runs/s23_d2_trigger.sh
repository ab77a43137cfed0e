#!/usr/bin/env bash
# Session 23, call 2 (H200, $OUT set; `bash ci/h200/stage.sh default`): where the TMA GEMM lets
# the next kernel launch. Split launches are plain now. The device-API suite under BLOCKFP8_PDL=on
# and =late, then `blockfp8 bench` of the 20 race shapes under BLOCKFP8_PDL = 0, on, late, exit,
# two interleaved rounds.
set -u
B=.device-bin
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
for v in on late; do
    BLOCKFP8_PDL=$v BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 120 $B/device_api --test-threads 2 > $R/device_api_$v.log 2>&1; echo "device_api PDL=$v rc=$?" | tee -a $R/device_api_$v.log
    grep -E "test result|panicked" $R/device_api_$v.log | head -4
done
shapes="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
i=0
for round in 1 2; do
    for v in 0 on late exit; do
        i=$((i + 1))
        BLOCKFP8_PDL=$v timeout 100 $B/blockfp8 bench --backend cuda --no-progress --no-check --json "${args[@]}" > $R/pdl_${v}_$i.json 2>> $R/pdl_bench.err
        echo "bench $i PDL=$v rc=$?"
    done
done
date -u >> $R/gpu.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
