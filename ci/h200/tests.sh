#!/usr/bin/env bash
# On the H200 (from the repository root, $OUT set): every test of a staged test binary, the
# #[ignore]d GPU tests included; they fail, rather than pass, if the GPU cannot be opened.
# The anchor benchmark is not a test and is left to bench_of_record.sh.
# Usage: [T=.device-bin/cuda-full] bash .device-bin/tests.sh   (default T: cuda-default)
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
T=${T:-.device-bin/cuda-default}
log=$OUT/tests_$(basename "$T").log
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt"
date -u >> "$OUT/gpu.txt"
timeout "${TEST_TIMEOUT:-200}" "$T" --include-ignored --skip anchor_benchmark --test-threads 4 > "$log" 2>&1
rc=$?
echo "tests $(basename "$T") rc=$rc" >> "$log"
grep -E "test result|panicked|rc=|FAILED" "$log" | head -8
exit $rc
