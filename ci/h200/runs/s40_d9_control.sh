#!/usr/bin/env bash
# Session 40, device call 9: a control for call 8. ncu cycles (ncu_ab.sh, 2 rounds) of the CLI
# called "shipped" all session (.devx/s40, the thirty-ninth session's base build) against the
# tree's own build made now (HEAD), and of that build against the last-C change.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
OUT=$R/base_head CLI_A=.devx/s40/blockfp8.xz CLI_B=.devx/s40h/blockfp8_head.xz ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 4096,7168,2048 2>&1 | grep -v "^[0-9x]* [AB]:" | tail -8
OUT=$R/head_lastc CLI_A=.devx/s40h/blockfp8_head.xz CLI_B=.devx/s40h/blockfp8_lastc.xz ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 4096,7168,2048 2>&1 | grep -v "^[0-9x]* [AB]:" | tail -8
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
