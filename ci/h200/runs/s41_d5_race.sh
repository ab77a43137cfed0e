#!/usr/bin/env bash
# Session 41, device call 5: the race of record with the CTA's last C stored by its consumer
# warps (s41_lastc_consumers.patch; GPU tests passed in call 2), the shipped build's bench
# beside it (BASE_BIN). race.sh with DeepGEMM paired (4 passes of 8 alternating rounds);
# carried: .device-bin (stage.sh default + python, without test binaries, cubins, wheels),
# .peers, .devx/s41base.
R=$OUT; mkdir -p $R/race
OUT=$R/race DG_MODE=paired PAIRED_PASSES=4 BASE_BIN=.devx/s41base/blockfp8.xz timeout 560 bash ci/h200/race.sh > $R/race.log 2>&1; echo "race rc=$?" >> $R/race.log
tar czf /tmp/race.tgz -C $R race && rm -rf $R/race && mv /tmp/race.tgz $R/
tail -34 $R/race.log
