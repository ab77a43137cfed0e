#!/usr/bin/env bash
# Session 24, call 6 (H200, $OUT set; .device-bin as call 5 with this commit's race.sh, .peers
# carried): the race with each DeepGEMM shape timed in a process of its own, two passes, each
# shape its faster (DeepGEMM at its fastest), and the crate's bench with column-major scales.
set -u
R=$OUT/r; mkdir -p $R
date -u > $R/dates.txt
DG_ISOLATED=1 DG_PASSES=2 BASE_ARGS="--scale-layout column-major" OUT=$R timeout 540 bash .device-bin/race.sh > $R/race_run.log 2>&1; echo "race rc=$?"; tail -3 $R/race_run.log
date -u >> $R/dates.txt
tar czf $OUT/r.tgz -C $OUT r
