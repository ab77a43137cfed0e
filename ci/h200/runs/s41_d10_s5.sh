#!/usr/bin/env bash
# Session 41, device call 10: 128x192 in 5 stages (no room for a C buffer: C staged through the
# ring, as 128x256 s4) against the shipped 4 stages (C buffer, store warp) at the two shapes that
# run 128x192, one CLI (e0e50fd with s41_s5tile.patch: the s5 tile compiled), configs forcing
# each tile (force_tile.py); ncu cycles at the fixed clock. The ring's fifth stage against the
# data waits (2.7% of the cycles at 4096x2112x7168, call 4).
set -u
: "${OUT:?}"; mkdir -p "$OUT"
V=.devx/s41s5
CLI_A=$V/blockfp8.xz CLI_B=$V/blockfp8.xz CFG_A=$V/cfg4 CFG_B=$V/cfg ROUNDS=2 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 1024,18432,7168 | grep "^|\|: sm90"
