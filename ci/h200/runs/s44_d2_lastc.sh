#!/usr/bin/env bash
# Prepared in session 43 for the next session (not run): two ways to send a store-warp tile's
# last C, each against the shipped source built plainly (.devx/s43head):
# - l16 (s43_l16_wgbox.patch, build .devx/s43l16 with its test binaries): in boxes of a consumer
#   warpgroup's 64 rows, 6 TMA stores a tile by one thread a warpgroup once its warps have
#   written them, as DeepGEMM stores a tile in BN / 64 boxes (a second C map, tma_c_wg);
# - l13 (s43_l13_lastfrag.patch, .devx/s43l13): straight from the fragments (STG, no TMA).
# GPU tests of l16; accuracy of l13 at partial tiles; ncu_ab at three shapes; the three CLIs'
# benches alternated three times.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r7; rm -rf $R; mkdir -p $R
for f in .devx/s43l16/*.xz .devx/s43head/blockfp8.xz .devx/s43l13/blockfp8.xz; do xz -dkf $f && chmod +x ${f%.xz}; done
for t in cuda device_api; do OUT=$R T=.devx/s43l16/$t TEST_TIMEOUT=200 bash ci/h200/tests.sh; done
CK=/tmp/cfgk; python3 ci/h200/force_tile.py $CK --tile m128n192w8s4 --group 8 --mnk 1000,2112,7168 > /dev/null
python3 ci/h200/force_tile.py $CK --tile m128n256w8s3 --group 8 --mnk 1000,4096,1536 > /dev/null
for s in 1000,2112,7168 1000,4096,1536; do
  .devx/s43l13/blockfp8 bench --backend cuda --no-progress --repeats 3 --rounds 1 --mnk $s --config-dir $CK 2>&1 | tee -a $R/check_l13.txt | grep -E "^\|" | tail -2
done
S="4096,2112,7168 2816,2112,7168 4096,7168,2048"
for v in s43l16 s43l13; do
  OUT=$R/ncu_$v CLI_A=.devx/s43head/blockfp8 CLI_B=.devx/$v/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh $S > $R/ncu_$v.log 2>&1
  echo "$v:"; grep "^|" $R/ncu_$v/ncu_ab.md | grep -v inst_exec
done
L="4096,2112,7168 2816,2112,7168 1024,18432,7168 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do for v in s43head s43l16 s43l13; do
  .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
done; done
for v in s43l16 s43l13; do echo "$v:"; python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_${v}_*.json | paste -sd,) | tee $R/timed_$v.md | grep -v kernel_default; done
tar czf $OUT/r7.tgz -C /tmp r7
