#!/usr/bin/env bash
# Session 47, call 4 (lost: the machine stopped answering; prepared again for the next session):
# the race of record with a staged build of the shipped kernels (WIN, a .devx folder), the script
# of session 46's call 2 (git show 1ada050:ci/h200/runs/s46_d2_tests_race.sh) with its time limit
# set by RACE_BUDGET (default 590 s). The GPU tests of WIN unless SKIP_TESTS=1, then race.sh with
# DeepGEMM paired, PAIRED_PASSES passes (default 3). Carry: .devx/$WIN .peers. Results: $OUT/r4.tgz,
# the race log and table beside it.
set -u
: "${OUT:?}" "${WIN:?name the candidate: WIN=s44l20}"; mkdir -p "$OUT" .device-bin; R=/tmp/r4; rm -rf $R; mkdir -p $R/race
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
for t in cuda device_api blockfp8 libblockfp8_capi.so; do xz -dc .devx/$WIN/$t.xz > .devx/$WIN/$t && chmod +x .devx/$WIN/$t; done
rc_all=0
for t in cuda device_api; do [ -n "${SKIP_TESTS:-}" ] && break; OUT=$R T=.devx/$WIN/$t TEST_TIMEOUT=180 bash ci/h200/tests.sh; rc=$?; echo "$t rc=$rc ($SECONDS s)"; [ $rc = 0 ] || rc_all=1; done
[ $rc_all = 0 ] || { echo "tests failed: no race"; exit 1; }
cp .devx/$WIN/blockfp8 .devx/$WIN/libblockfp8_capi.so .device-bin/
left=$((${RACE_BUDGET:-590} - SECONDS)); echo "race with ${left} s left"
OUT=$R/race DG_MODE=paired PAIRED_PASSES=${PAIRED_PASSES:-3} timeout $left bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$? ($SECONDS s)" | tee -a $R/race.log
cp $R/race.log $OUT/; [ -f $R/race/race.md ] && cp $R/race/race.md $OUT/
tail -34 $R/race.log
