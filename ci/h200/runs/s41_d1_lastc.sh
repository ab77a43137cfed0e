#!/usr/bin/env bash
# Session 41, device call 1: the CTA's last C stored by its consumer warps' own TMA stores (the
# store warp leaves after the last tile's C_FREE; s41_lastc_consumers.patch). GPU tests of the
# variant, then ncu cycles at the fixed clock, shipped (A) against the variant (B).
set -u
: "${OUT:?}"; mkdir -p "$OUT"
V=.devx/s41v1
for b in cuda-default device_api; do xz -dkf $V/$b.xz && chmod +x $V/$b; done
T=$V/cuda-default TEST_TIMEOUT=240 bash ci/h200/tests.sh
T=$V/device_api TEST_TIMEOUT=120 bash ci/h200/tests.sh
CLI_A=.devx/s41base/blockfp8.xz CLI_B=$V/blockfp8.xz ROUNDS=2 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 4096,7168,2048 1024,18432,7168 4096,24576,1536
tar czf $OUT/r.tgz -C $OUT --exclude r.tgz . 
