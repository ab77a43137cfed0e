#!/usr/bin/env bash
# Session 20, call 3: the race of record of the staged build (re-tuned configs, evict-first
# weights on swapped decode tiles) with the configs of 0a1117f as the base column (race.sh),
# the default build's CUDA suite with its GPU tests (tests.sh) and the Python package's pytest.
set -u
B=.device-bin; FINAL_OUT=$OUT; R=/tmp/r; rm -rf $R; mkdir -p $R/race $R/tests $R/py
pack() { (cd $R && tar czf $FINAL_OUT/r.tgz *); }
OUT=$R/race timeout 330 bash $B/race.sh > $R/race/race.log 2>&1; echo "race rc=$? $(date -u +%T)"; pack
OUT=$R/tests bash $B/tests.sh; echo "tests rc=$? $(date -u +%T)"; pack
OUT=$R/py STEPS="install test" timeout 150 bash $B/python_package.sh > $R/py/run.log 2>&1; echo "python rc=$? $(date -u +%T)"
grep -E "passed|failed" $R/py/run.log | tail -2
pack
