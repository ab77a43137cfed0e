#!/usr/bin/env bash
# Session 38, device call 6: the race of record of the shipped tree (the 144/192-wide tiles back to
# reading their scales after their wgmmas, as 75c5495). race.sh with DeepGEMM paired (4 passes of 8 alternating
# rounds); carried: .device-bin (stage.sh default + python, without the test binaries and
# cubins), .peers.
R=$OUT; mkdir -p $R/race
OUT=$R/race DG_MODE=paired PAIRED_PASSES=4 timeout 235 bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$?" >> $R/race.log
tar czf $R/race.tgz -C $R race && rm -rf $R/race
tail -32 $R/race.log
