#!/usr/bin/env bash
# Session 39, device call 1: the per-tile weight-scale copies (BS_TILE, .devx/s39/bst) checked by
# the GPU tests, then paired against DeepGEMM beside the shipped build (A/B 1), and the
# 192-wide tile's scales-before-wgmmas order on top of it (A/B 2: bst vs bstsf).
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
X=.devx/s39
T=$X/bst/cuda-default bash ci/h200/tests.sh > "$OUT/tests.txt" 2>&1
cat "$OUT/tests.txt"
OUT=$OUT/ab1 LIB_B=$X/bst/libblockfp8_capi.so PASSES=3 bash ci/h200/paired_ab.sh \
  128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,24576,1536 4096,2112,7168 4096,7168,2048 > "$OUT/ab1.txt" 2>&1
tail -30 "$OUT/ab1.txt"
OUT=$OUT/ab2 LIB_A=$X/bst/libblockfp8_capi.so LIB_B=$X/bstsf/libblockfp8_capi.so PASSES=4 bash ci/h200/paired_ab.sh \
  4096,2112,7168 1024,18432,7168 > "$OUT/ab2.txt" 2>&1
tail -12 "$OUT/ab2.txt"
tar -czf "$OUT/all.tgz" -C "$OUT" --exclude all.tgz . 2>/dev/null
