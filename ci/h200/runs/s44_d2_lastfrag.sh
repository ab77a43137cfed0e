#!/usr/bin/env bash
# Prepared in session 43 for the next session (not run): with loads, the CTA's last C straight
# from the consumers' fragments (STG, no C buffer or TMA; s43_l13_lastfrag.patch, build
# .devx/s43l13) against the shipped CLI (.devx/s41ship): accuracy at partial tiles (128x192 and
# 128x256 forced at M = 1000), ncu_ab at four shapes, both CLIs' benches alternated three times.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r7; rm -rf $R; mkdir -p $R
for v in s41ship s43l13; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
CK=/tmp/cfgk; python3 ci/h200/force_tile.py $CK --tile m128n192w8s4 --group 8 --mnk 1000,2112,7168 > /dev/null
python3 ci/h200/force_tile.py $CK --tile m128n256w8s4 --group 8 --mnk 1000,4096,7168 > /dev/null
for s in 1000,2112,7168 1000,4096,7168; do
  .devx/s43l13/blockfp8 bench --backend cuda --no-progress --repeats 3 --rounds 1 --mnk $s --config-dir $CK 2>&1 | tee -a $R/check.txt | grep -E "^\|" | tail -2
done
OUT=$R/ncu CLI_A=.devx/s41ship/blockfp8 CLI_B=.devx/s43l13/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh 4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,4096,7168 > $R/ncu_ab.log 2>&1
grep "^|" $R/ncu/ncu_ab.md | grep -v inst_exec
L="4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,2048"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do for v in s41ship s43l13; do
  .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
done; done
python3 ci/h200/ab_compare.py $(ls $R/t_s41ship_*.json | paste -sd,) $(ls $R/t_s43l13_*.json | paste -sd,) | tee $R/timed_ab.md | grep -v kernel_default
tar czf $OUT/r7.tgz -C /tmp r7
