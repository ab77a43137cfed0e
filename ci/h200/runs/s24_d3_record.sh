#!/usr/bin/env bash
# Session 24, call 3 (H200, $OUT set; `bash ci/h200/stage.sh default && bash ci/h200/stage.sh python`
# on the final tree, whose kernels are byte for byte those of call 1's race; .peers carried): the
# race with DeepGEMM timed in two passes (each shape its faster) and the crate's bench with
# column-major activation scales (the layout DeepGEMM is given) as the third column; then the
# device-API suite with CUDA required, the CUDA suite with its GPU tests, and the Python
# package's install and tests. The results are re-packed after each step.
set -u
B=.device-bin
R=$OUT/r; mkdir -p $R
pack() { tar czf $OUT/r.tgz -C $OUT r; }
date -u > $R/dates.txt
DG_PASSES=2 BASE_ARGS="--scale-layout column-major" OUT=$R timeout 420 bash $B/race.sh > $R/race_run.log 2>&1; echo "race rc=$?"; tail -3 $R/race_run.log
date -u >> $R/dates.txt; pack
BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 60 $B/device_api --test-threads 2 > $R/device_api.log 2>&1; echo "device_api rc=$?" >> $R/device_api.log
grep -E "test result|panicked|FAILED|rc=" $R/device_api.log | head -6
date -u >> $R/dates.txt; pack
timeout 150 $B/cuda-default --include-ignored --skip anchor_benchmark --test-threads 4 > $R/cuda_tests.log 2>&1; echo "cuda rc=$?" >> $R/cuda_tests.log
grep -E "test result|panicked|FAILED|rc=" $R/cuda_tests.log | head -6
date -u >> $R/dates.txt; pack
STEPS="install test" OUT=$R/py timeout 100 bash $B/python_package.sh > $R/python.log 2>&1; echo "python rc=$?"; grep -E "passed|failed|error" $R/python.log | tail -3
date -u >> $R/dates.txt; pack
