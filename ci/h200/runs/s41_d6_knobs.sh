#!/usr/bin/env bash
# Session 41, device call 6: what the two-consumer tiles' K loop costs without data waits
# (s41_noab.patch, call 4) once it also skips the promotion's FFMAs (NOPROMOTE) or reads no
# scales from shared memory (NOSCALES; s41_noab_knobs.patch, built with -DBFP8_DIAG_...): ncu
# cycles at the fixed clock, each against the no-loads build.
set -u
: "${OUT:?}"; mkdir -p "$OUT"
for v in NOPROMOTE NOSCALES; do
  OUT=/tmp/r/$v CLI_A=.devx/s41noab/blockfp8.xz CLI_B=.devx/s41$v/blockfp8.xz ROUNDS=1 bash ci/h200/ncu_ab.sh \
    4096,2112,7168 4096,4096,7168 | grep "^|"
done
tar czf $OUT/r.tgz -C /tmp r
