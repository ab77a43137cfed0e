#!/usr/bin/env bash
# Session 41, device call 7: the scale path's share with the data loads in place: the shipped
# build (e0e50fd) against the same with the two-consumer tiles' scales constant (no shared-memory
# reads or products; s41_noscales.patch, -DBFP8_DIAG_NOSCALES), ncu cycles at the fixed clock.
set -u
: "${OUT:?}"; mkdir -p "$OUT"
CLI_A=.devx/s41ship/blockfp8.xz CLI_B=.devx/s41ns/blockfp8.xz ROUNDS=1 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 4096,4096,7168 1024,18432,7168 | grep "^|"
