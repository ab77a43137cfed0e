#!/usr/bin/env bash
# Session 41, device call 4: the two-consumer tiles' consumer loop without data waits. A
# diagnostic build (s41_noab.patch: the producer loads no A or B tiles, only the scales, so
# each stage is full as soon as the ring lets it be) against the shipped build, ncu cycles at
# the fixed clock: what the K loop costs when L2 and DRAM never hold it up.
set -u
: "${OUT:?}"; mkdir -p "$OUT"
CLI_A=.devx/s41base/blockfp8.xz CLI_B=.devx/s41noab/blockfp8.xz ROUNDS=1 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 4096,4096,7168 1024,18432,7168 4096,24576,1536
