#!/usr/bin/env bash
# On the H200 (from the repository root, $OUT set): the H200 tables of record in BENCHMARKS.md.
#  1. every test of the tuning build (.device-bin/cuda-full), GPU tests included;
#  2. the anchor benchmark of that build with its sweep: bytes floor, measured floor, cuBLASLt,
#     bf16 cuBLASLt, kernel default and the best compiled tile per shape ($OUT/bench.md);
#  3. `blockfp8 bench` (default build) of the 16 anchor shapes through the shipped configs:
#     tuned path against kernel default and cuBLASLt ($OUT/cli_bench.md).
# Timing: CUDA graph replay of one pass over rotating input copies >= 256 MiB, CUDA events,
# median of 15 repeats (bench: 3 interleaved rounds).
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
B=.device-bin
T=${T:-$B/cuda-full}
date -u > "$OUT/dates.txt"
T=$T bash $B/tests.sh || echo "tests failed: the figures below are not of record"
date -u >> "$OUT/dates.txt"
RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_OUT=$OUT/bench.md timeout "${BENCH_TIMEOUT:-240}" "$T" --ignored anchor_benchmark --nocapture > "$OUT/bench.log" 2>&1
echo "anchor benchmark $(basename "$T") rc=$?"
grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" "$OUT/bench.md" | cut -d'|' -f2-4,6,8,9,10
date -u >> "$OUT/dates.txt"
shapes=""
for s in 8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 \
         64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168; do
    shapes="$shapes --mnk $s"
done
# shellcheck disable=SC2086
timeout 120 $B/blockfp8 bench --backend cuda $shapes --no-progress > "$OUT/cli_bench.md" 2>&1
echo "blockfp8 bench rc=$?"
grep -E "Average speedup|^\| (tuned|kernel default|vendor) " "$OUT/cli_bench.md" | head -8
date -u >> "$OUT/dates.txt"
rm -f "$OUT/bench.log"
