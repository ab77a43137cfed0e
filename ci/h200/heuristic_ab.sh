#!/bin/bash
# Ninth session: the kernel default at M <= 128 (shapes with no tuned entry) with deeper rings.
# `blockfp8 bench` of three default builds: `cli_base` (a79c928: 16x64 / 32x64 / 64x64 tiles
# with 4 stages), `cli_new2` (8 stages; M 33-64 on 64x64) and `cli_new1` (8 stages; M 33-64
# on 32x64), on DeepSeek-V3 and other weight shapes at M = 8, 32, 64, 128, alternating.
B=.device-bin
SH="--shape 4096,7168 --shape 18432,7168 --shape 7168,18432 --shape 4096,4096 --shape 14336,4096 --shape 4096,14336"
date -u > $OUT/dates.txt
for r in 1 2; do for v in base new2 new1; do
  timeout 70 $B/cli_$v bench --backend cuda $SH --batch-size 8,32,64,128 --no-check --csv > $OUT/h_${v}_$r.csv 2> $OUT/h_${v}_$r.err
  echo "$v round $r rc=$?" | tee -a $OUT/dates.txt
done; done
date -u >> $OUT/dates.txt
for f in $OUT/h_*.err; do tail -2 $f; done > $OUT/errs.txt; rm -f $OUT/h_*.err
