#!/usr/bin/env bash
# Session 37, device call 3: the race of record. race.sh with DeepGEMM both paired (4 passes of
# 8 alternating rounds) and alone (the earlier method, 2 passes, each shape in its own process).
R=$OUT
OUT=$R/race DG_MODE=both PAIRED_PASSES=4 DG_PASSES=2 timeout 560 bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$?" >> $R/race.log
tar czf $R/race.tgz -C $R race && rm -rf $R/race
tail -32 $R/race.log
