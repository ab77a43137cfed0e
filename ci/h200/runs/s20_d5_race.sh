#!/usr/bin/env bash
# Session 20, call 5: the race of record after the re-tune of call 4 (8745cab's configs, the base
# column through d00263c's), then the default build's CUDA suite with its GPU tests.
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/race $R/tests
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
OUT=$R/race timeout 250 bash $B/race.sh > $R/race/race.log 2>&1; echo "race rc=$? $(date -u +%T)"; pack
OUT=$R/tests TEST_TIMEOUT=120 bash $B/tests.sh; echo "tests rc=$? $(date -u +%T)"; pack
