#!/usr/bin/env bash
# Prepared in session 44 (not run): the GPU tests of the candidate call 1 picks (WIN=s43l15,
# s44l17 or s44l18), its cuda and device_api test binaries with every #[ignore]d GPU test
# (ci/h200/tests.sh), then its bench against the shipped build at the race's large shapes, as
# long as the call's time allows. Carry: .devx/$WIN .devx/s43head. Results under /tmp/r2,
# tarred into $OUT/r2.tgz (at most 8 files come back from $OUT); the summary also on stdout.
set -u
: "${OUT:?}" "${WIN:?name the candidate: WIN=s44l18}"; mkdir -p "$OUT"; R=/tmp/r2; rm -rf $R; mkdir -p $R
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
for f in .devx/$WIN/*.xz .devx/s43head/blockfp8.xz; do [ "${f%.so.xz}" = "$f" ] || continue; xz -dkf $f && chmod +x ${f%.xz}; done
for t in cuda device_api; do OUT=$R T=.devx/$WIN/$t TEST_TIMEOUT=240 bash ci/h200/tests.sh; echo "$t rc=$? ($SECONDS s)"; done
L="4096,2112,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
    [ $SECONDS -lt 480 ] || break
    for v in s43head $WIN; do
        .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
    done
done
python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_${WIN}_*.json | paste -sd,) | tee $R/timed.md | grep -v kernel_default
