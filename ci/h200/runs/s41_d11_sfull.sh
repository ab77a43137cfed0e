#!/usr/bin/env bash
# Session 41, device call 11: the 144/192-wide tiles' scales on a barrier of their own, ahead of
# the A and B tiles, made into products by the producer warpgroup's warp 3 before it releases the
# stage's `full` barrier (s41_sfull.patch on a3b4256), so that the consumers wait for nothing new.
# GPU tests; ncu cycles at the fixed clock, e0e50fd's build (A) against it (B); and, only if B
# takes under 0.995x the cycles at 4096x2112x7168, the race of record (race.sh, DeepGEMM paired).
set -u
: "${OUT:?}"; mkdir -p "$OUT"
V=.devx/s41s2
for b in cuda-default device_api; do xz -dkf $V/$b.xz && chmod +x $V/$b; done
T=$V/cuda-default TEST_TIMEOUT=110 bash ci/h200/tests.sh
T=$V/device_api TEST_TIMEOUT=40 bash ci/h200/tests.sh
OUT=/tmp/ncu CLI_A=.devx/s41ship/blockfp8.xz CLI_B=$V/blockfp8.xz ROUNDS=1 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 1024,18432,7168 > /dev/null 2>&1
cp /tmp/ncu/ncu_ab.md $OUT/ && grep "gpc__" $OUT/ncu_ab.md
r=$(grep "^| 4096x2112x7168 | gpc__" $OUT/ncu_ab.md | awk -F'|' '{gsub(/ /,"",$6); print $6}')
if awk -v r="$r" 'BEGIN { exit !(r != "" && r < 0.995) }'; then
  OUT=/tmp/race DG_MODE=paired PAIRED_PASSES=4 timeout 170 bash ci/h200/race.sh > $OUT/race.log 2>&1; echo "race rc=$?" >> $OUT/race.log
  tar czf $OUT/race.tgz -C /tmp race; tail -4 $OUT/race.log
else echo "no race: B / A = $r at 4096x2112x7168"; fi
