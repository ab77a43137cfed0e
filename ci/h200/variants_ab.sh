#!/bin/bash
# A/B of several test-binary builds staged as .device-bin/<variant> (each built with a patch
# from ci/h200/experiments/, BLOCKFP8_NVCC_FLAGS or BLOCKFP8_FFMA_YIELD): all GPU tests of the
# variants named in $TESTED, then the bench on $SHAPES with each variant in turn over $ROUNDS
# rounds, so clock and thermal drift hit every variant alike. $SWEEP=0 times only the kernel
# default (quick; the sweep finds each shape's best compiled tile), SWEEP_<variant> for one
# variant. ENV_<variant> sets extra environment for one variant (e.g. ENV_pdl0="BLOCKFP8_PDL=0"
# runs the PDL build, staged a second time as pdl0, without programmatic launches).
# Variant names are file names in .device-bin and must be valid shell identifiers.
# Usage: VARIANTS="base staged" TESTED="staged" bash .device-bin/variants_ab.sh
B=.device-bin
ROUNDS=${ROUNDS:-2}
SWEEP=${SWEEP:-1}
SHAPES=${SHAPES:-1024x4096x7168,1024x18432x7168,2048x4096x7168,4096x4096x7168,128x7168x18432}
date -u > $OUT/dates.txt
for v in $TESTED; do
  timeout 170 $B/$v --test-threads 4 > $OUT/tests_$v.log 2>&1; echo "tests rc=$?" >> $OUT/tests_$v.log
  echo "== tests $v"; grep -E "test result|panicked|rc=|FAIL" $OUT/tests_$v.log | head -6
done
for r in $(seq 1 $ROUNDS); do for v in $VARIANTS; do
  date -u >> $OUT/dates.txt
  extra_var=ENV_$v; extra=${!extra_var}; sweep_var=SWEEP_$v; sweep=${!sweep_var:-$SWEEP}
  env $extra RUST_LOG=blockfp8=debug BLOCKFP8_BENCH_SWEEP=$sweep BLOCKFP8_BENCH_SHAPES=$SHAPES BLOCKFP8_BENCH_OUT=$OUT/bench_${v}_$r.md timeout ${BENCH_TIMEOUT:-150} $B/$v --ignored bench --nocapture > $OUT/bench_${v}_$r.log 2>&1
  echo "== $v round $r rc=$?"; grep -E "^\| [0-9]+ \| [0-9]+ \| [0-9]+ \|" $OUT/bench_${v}_$r.md | cut -d'|' -f2-4,6,8,9,10
done; done
date -u >> $OUT/dates.txt
