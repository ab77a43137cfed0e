#!/usr/bin/env bash
# Session 46 (its device budget cut by failed machine starts): calls 2 and 3 of the prepared plan
# in one call. The GPU tests of the candidate call 1 picks (WIN), its cuda and device_api test
# binaries with every #[ignore]d GPU test (ci/h200/tests.sh); if both pass, the race of record
# with it (race.sh, DeepGEMM paired, PAIRED_PASSES passes, default 3), in the time left.
# SKIP_TESTS=1: the tests ran in call 1 (s46_d1_l20.sh tests s44l20). Carry: .devx/$WIN .peers. Results: $OUT/r2.tgz, the race log and table beside it.
set -u
: "${OUT:?}" "${WIN:?name the candidate: WIN=s44l20}"; mkdir -p "$OUT" .device-bin; R=/tmp/r2; rm -rf $R; mkdir -p $R/race
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
for t in cuda device_api blockfp8 libblockfp8_capi.so; do xz -dc .devx/$WIN/$t.xz > .devx/$WIN/$t && chmod +x .devx/$WIN/$t; done
rc_all=0
for t in cuda device_api; do [ -n "${SKIP_TESTS:-}" ] && break; OUT=$R T=.devx/$WIN/$t TEST_TIMEOUT=180 bash ci/h200/tests.sh; rc=$?; echo "$t rc=$rc ($SECONDS s)"; [ $rc = 0 ] || rc_all=1; done
[ $rc_all = 0 ] || { echo "tests failed: no race"; exit 1; }
cp .devx/$WIN/blockfp8 .devx/$WIN/libblockfp8_capi.so .device-bin/
left=$((590 - SECONDS)); echo "race with ${left} s left"
OUT=$R/race DG_MODE=paired PAIRED_PASSES=${PAIRED_PASSES:-3} timeout $left bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$? ($SECONDS s)" | tee -a $R/race.log
cp $R/race.log $OUT/; [ -f $R/race/race.md ] && cp $R/race/race.md $OUT/
tail -34 $R/race.log
