#!/usr/bin/env bash
# Session 27, call 5 (H200, $OUT set; run as this command line): call 4's folder C against the
# shipped files again, three interleaved rounds, two more shapes.
R=$OUT/r; mkdir -p $R; shapes="--mnk 2048,24576,1536 --mnk 3072,24576,1536 --mnk 4096,24576,1536 --mnk 4096,7168,2048 --mnk 4096,2112,7168"; for r in 1 2 3; do for v in ship C; do extra=""; [ $v != ship ] && extra="--config-dir .devx/cfg-$v"; timeout 80 .device-bin/blockfp8 bench --backend cuda --no-progress --no-check --json $extra $shapes > $R/${v}_$r.json 2>/dev/null; done; done; python3 ci/h200/ab_compare.py $R/ship_1.json,$R/ship_2.json,$R/ship_3.json $R/C_1.json,$R/C_2.json,$R/C_3.json | tee $R/ab_C.md; tar czf $OUT/r.tgz -C $OUT r
