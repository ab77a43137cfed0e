#!/bin/bash
# Ninth session: the tail split (whole waves of whole tiles, the partial last wave's tiles in
# K parts finished in the kernel) against the shipped kernel. Default test builds: `base`
# (HEAD before the change), `tail` (the change; BLOCKFP8_TAIL_SPLIT=1 applies the tail split
# to every unsplit TMA launch) and `tail0` (the same build without it: plain split K now
# clears its workspace in the conversion kernel instead of a memset). All GPU tests of
# `tail`; the anchor bench with the sweep over the default build's tiles, 2 rounds.
B=.device-bin
date -u > $OUT/dates.txt
mkdir -p $OUT/ab
OUT=$OUT/ab VARIANTS="base tail0 tail" ENV_tail="BLOCKFP8_TAIL_SPLIT=1" TESTED="tail" ROUNDS=2 SWEEP=1 BENCH_TIMEOUT=90 \
  SHAPES=1024x18432x7168,128x18432x7168,64x18432x7168,8x18432x7168,1024x4096x7168,4096x4096x7168,8x4096x7168,64x4096x7168,8x7168x18432,128x7168x18432 \
  bash $B/variants_ab.sh > $OUT/summary.txt 2>&1
for f in $OUT/ab/bench_*.md; do echo "## $(basename $f)"; cat $f; done > $OUT/tables.md
for f in $OUT/ab/bench_*.log; do echo "## $(basename $f)"; grep -E "(1024x18432x7168|128x18432x7168|64x18432x7168) m(128|64)n" $f | sed "s/.*blockfp8[^]]*] //" | head -40; done > $OUT/debug_excerpt.txt
grep -E "test result|panicked|rc=|FAIL|^test " $OUT/ab/tests_tail.log > $OUT/tests_tail.txt
date -u >> $OUT/dates.txt
rm -rf $OUT/ab
