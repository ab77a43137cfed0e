#!/usr/bin/env bash
# Session 17, call 4: the race of record on the final kernels and configs (staged at 35c306f + comments), then the
# GPU tests (cuda-default, device_api) and pytest. carry [".device-bin", ".devx", ".peers"]
set -u
R=$OUT/r; mkdir -p $R/race; t0=$(date +%s)
B=.device-bin
OUT=$R/race bash ci/h200/race.sh > $R/race/race.log 2>&1; echo "race rc=$? $(( $(date +%s)-t0 ))s"
tail -28 $R/race/race.md
OUT=$R TEST_TIMEOUT=150 bash $B/tests.sh; echo "tests $(( $(date +%s)-t0 ))s"
BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 100 $B/device_api --test-threads 2 > $R/device_api.log 2>&1; echo "device_api rc=$? $(( $(date +%s)-t0 ))s"; grep -E "test result|FAILED" $R/device_api.log | head -3
mkdir -p $R/py; OUT=$R/py STEPS="install test" timeout 170 bash $B/python_package.sh > $R/py/run.log 2>&1; echo "py rc=$? $(( $(date +%s)-t0 ))s"; grep -E "passed|failed" $R/py/run.log | tail -2
tar czf $OUT/r.tgz -C $OUT r
