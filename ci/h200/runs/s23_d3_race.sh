#!/usr/bin/env bash
# Session 23, call 3 (H200, $OUT set; `bash ci/h200/stage.sh default && bash ci/h200/stage.sh python`,
# .peers carried): the race of record of the TMA GEMM as a programmatic dependent launch (its
# trigger once the consumers finish their last K block; split launches plain). The device-API
# suite with CUDA required, the CUDA suite, the decode example, then race.sh with the same
# bench under BLOCKFP8_PDL=0 as its third column, then the Python package's install and tests.
set -u
B=.device-bin
R=$OUT/r; mkdir -p $R
date -u > $R/dates.txt
BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 120 $B/device_api --test-threads 2 > $R/device_api.log 2>&1; echo "device_api rc=$?" >> $R/device_api.log
grep -E "test result|panicked|FAILED|rc=" $R/device_api.log | head -6
timeout 200 $B/cuda-default --include-ignored --skip anchor_benchmark --test-threads 4 > $R/cuda_tests.log 2>&1; echo "cuda rc=$?" >> $R/cuda_tests.log
grep -E "test result|panicked|FAILED|rc=" $R/cuda_tests.log | head -6
RUST_LOG=blockfp8=info timeout 60 $B/cuda_decode_step > $R/decode_step.log 2> $R/decode_step.err; echo "decode rc=$?"; tail -2 $R/decode_step.log
date -u >> $R/dates.txt
BASE_ENV="BLOCKFP8_PDL=0" OUT=$R timeout 330 bash $B/race.sh > $R/race_run.log 2>&1; echo "race rc=$?"; tail -4 $R/race_run.log
date -u >> $R/dates.txt
STEPS="install test" OUT=$R/py timeout 150 bash $B/python_package.sh > $R/python.log 2>&1; echo "python rc=$?"; grep -E "passed|failed|error" $R/python.log | tail -3
date -u >> $R/dates.txt
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
