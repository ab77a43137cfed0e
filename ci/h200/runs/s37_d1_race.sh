#!/usr/bin/env bash
# Session 37, device call 1: the race with DeepGEMM paired (same inputs, one process, alternating
# rounds; race.sh DG_MODE=paired), then the package's GPU pytest suite (eager fast path's first GPU run).
R=$OUT
date -u > $R/start.txt
OUT=$R/race DG_MODE=paired DG_PASSES=2 timeout 420 bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$?" >> $R/race.log
date -u >> $R/start.txt
OUT=$R/pkg STEPS="install test" timeout 150 bash ci/h200/python_package.sh > $R/pkg.log 2>&1; echo "pkg rc=$?" >> $R/pkg.log
date -u >> $R/start.txt
tail -40 $R/race/race.md; tail -5 $R/pkg.log
