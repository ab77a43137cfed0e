#!/usr/bin/env bash
# Session 24, call 5 (H200, $OUT set; .device-bin as call 3 with this commit's ci/h200 scripts,
# .peers carried): the race of record with DeepGEMM's float64 checks after all its timings (call
# 4 timed it alone at 234.3 / 166.1 us on 4096x24576x1536 / 4096x4096x7168, three turns each,
# where call 3's race passes read 238.2 and 284.0 / 169.8 and 166.8), two DeepGEMM passes, the
# crate's bench with column-major activation scales as the third column.
set -u
R=$OUT/r; mkdir -p $R
date -u > $R/dates.txt
DG_PASSES=2 BASE_ARGS="--scale-layout column-major" OUT=$R timeout 480 bash .device-bin/race.sh > $R/race_run.log 2>&1; echo "race rc=$?"; tail -3 $R/race_run.log
date -u >> $R/dates.txt
tar czf $OUT/r.tgz -C $OUT r
