#!/usr/bin/env bash
# On the H200 ($OUT set, binaries staged in .device-bin/ by ci/h200/stage.sh): the device-API
# evidence of record. The device-API tests with CUDA required (a missing GPU fails them), the
# CUDA suite with its GPU tests, the decode-step example (graph capture + replay after new
# inputs, allocation count, host overhead, eager vs graph), and `blockfp8 bench` of the anchor
# shapes through the shipped configs (timed through the same enqueue users run).
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
B=.device-bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt"
date -u >> "$OUT/gpu.txt"
rc=0
BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 300 $B/device_api --test-threads 2 > "$OUT/device_api.log" 2>&1 || rc=1
grep -E "test result|panicked|FAILED|backends run" "$OUT/device_api.log" | head -12
timeout 300 $B/cuda-default --include-ignored --skip anchor_benchmark --test-threads 4 > "$OUT/cuda_tests.log" 2>&1 || rc=1
grep -E "test result|panicked|FAILED" "$OUT/cuda_tests.log" | head -8
RUST_LOG=blockfp8=info timeout 300 $B/cuda_decode_step > "$OUT/decode_step.log" 2>"$OUT/decode_step.err" || rc=1
cat "$OUT/decode_step.log"
if [ "${BENCH:-1}" = 1 ]; then
    timeout 300 $B/blockfp8 bench --backend cuda --no-progress > "$OUT/bench.md" 2> "$OUT/bench.err" || rc=1
    tail -40 "$OUT/bench.md"
fi
echo "device_api.sh rc=$rc"
exit $rc
