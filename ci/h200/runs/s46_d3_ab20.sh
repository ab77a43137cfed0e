#!/usr/bin/env bash
# Session 46, after call 1 (s46_d1_l20.sh) and the race (s46_d2_tests_race.sh, WIN=s44l20): the
# shipped source (.devx/s43head) against s44l20 and s44l21 on all 20 race shapes, the three
# CLIs' benches alternated in three rounds, then two more ncu rounds at 4096x24576x1536 (where
# call 1 found s44l20 1% more cycles) and 4096x2112x7168, with l20's steps one by one (l15, l18,
# l19: s45_d1_candidates.sh says what each adds) to find the step behind that 1%. Carry:
# .devx/{s43head,s43l15,s44l18,s44l19,s44l20,s44l21}. Results under /tmp/r3, tarred into $OUT/r3.tgz; tables on stdout and summary.md.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r3; rm -rf $R; mkdir -p $R/ncu/raw
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
V="s43head s44l20 s44l21"
for v in $V s43l15 s44l18 s44l19; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
L="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
    [ $SECONDS -lt 300 ] || { echo "timed round $r skipped at $SECONDS s"; break; }
    for v in $V; do
        .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
    done
    echo "timed round $r done at $SECONDS s"
done
for v in s44l20 s44l21; do
    echo "$v timed:"; python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_${v}_*.json | paste -sd,) | tee $R/timed_$v.md | grep -v kernel_default
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,24576,1536 4096,2112,7168; do
    for r in 3 4; do
        [ $SECONDS -lt 420 ] || { echo "ncu $s round $r skipped at $SECONDS s"; continue; }
        for v in $V s43l15 s44l18 s44l19; do
            timeout 120 "$NCU" --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum --csv \
                --kernel-name regex:sm90_gemm_block_fp8_m --launch-count 2 .devx/$v/blockfp8 "${bench[@]}" --mnk $s \
                > $R/ncu/raw/${v}_${s//,/x}.$r.csv 2> $R/ncu/raw/${v}_${s//,/x}.$r.err
        done
    done
done
for v in s43l15 s44l18 s44l19 s44l20 s44l21; do
    d=$R/ncu/$v; mkdir -p $d
    for f in $R/ncu/raw/s43head_*.csv; do b=$(basename $f); x=${b#s43head_}; ln -sf ../raw/$b $d/ncu_${x%%.*}_A.${x#*.}; done
    for f in $R/ncu/raw/${v}_*.csv; do b=$(basename $f); x=${b#${v}_}; ln -sf ../raw/$b $d/ncu_${x%%.*}_B.${x#*.}; done
    echo "$v over s43head (ncu, fixed clock, rounds 3-4):"; python3 ci/h200/ncu_ab.py $d | tee $R/ncu_$v.md | grep "^|" | grep -v inst_exec
done
echo "done at $SECONDS s"
