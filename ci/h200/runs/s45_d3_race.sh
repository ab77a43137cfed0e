#!/usr/bin/env bash
# Prepared in session 44 (not run): the race of record with the candidate whose GPU tests passed
# (WIN), the shipped build's bench beside it (BASE_BIN): race.sh with DeepGEMM paired (4 passes
# of 8 alternating rounds). .device-bin is made here from the candidate's staged CLI and C ABI
# library (all race.sh reads from it). Carry: .devx/$WIN .devx/s43head .peers (a copy of
# ../shared/peers).
# Results: the race folder tarred into $OUT/race.tgz (at most 8 files come back from $OUT), its
# log beside it.
set -u
: "${OUT:?}" "${WIN:?name the candidate: WIN=s44l18}"; mkdir -p "$OUT" .device-bin; R=/tmp/r3; rm -rf $R; mkdir -p $R/race
xz -dc .devx/$WIN/blockfp8.xz > .device-bin/blockfp8 && xz -dc .devx/$WIN/libblockfp8_capi.so.xz > .device-bin/libblockfp8_capi.so && chmod +x .device-bin/blockfp8 .device-bin/libblockfp8_capi.so
OUT=$R/race DG_MODE=paired PAIRED_PASSES=4 BASE_BIN=.devx/s43head/blockfp8 timeout 560 bash ci/h200/race.sh > $OUT/race.log 2>&1; echo "race rc=$?" >> $OUT/race.log
tar czf $OUT/race.tgz -C $R race
tail -34 $OUT/race.log
