#!/usr/bin/env bash
# Prepared in session 44 (not run): the race of record with the candidate whose GPU tests passed
# (WIN), the shipped build's bench beside it (BASE_BIN): race.sh with DeepGEMM paired (4 passes
# of 8 alternating rounds). .device-bin is made here from the candidate's staged CLI and C ABI
# library (all race.sh reads from it). Carry: .devx/$WIN .devx/s43head .peers (a copy of
# ../shared/peers).
set -u
: "${OUT:?}" "${WIN:?name the candidate: WIN=s44l18}"; R=$OUT; mkdir -p $R/race .device-bin
xz -dc .devx/$WIN/blockfp8.xz > .device-bin/blockfp8 && xz -dc .devx/$WIN/libblockfp8_capi.so.xz > .device-bin/libblockfp8_capi.so && chmod +x .device-bin/blockfp8 .device-bin/libblockfp8_capi.so
OUT=$R/race DG_MODE=paired PAIRED_PASSES=4 BASE_BIN=.devx/s43head/blockfp8 timeout 560 bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$?" >> $R/race.log
tail -34 $R/race.log
