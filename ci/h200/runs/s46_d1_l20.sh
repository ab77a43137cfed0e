#!/usr/bin/env bash
# Session 46 (its device budget cut by failed machine starts): call 1 of the prepared plan cut
# to the two builds that would ship, against the shipped source built plainly (.devx/s43head):
# - s44l20 (s44_l20_nextitem.patch): l15's split C barriers, the last C in boxes of the tile's
#   128 rows, its origin from the store warp, the next tile's coordinates worked out while the
#   tile's last wgmmas run (the intermediate builds l15, l18, l19 of s45_d1_candidates.sh left out);
# - s44l21 (s44_l21_nol15.patch): the same on the shipped barriers, so l15's share shows.
# ncu cycles at its fixed clock (two rounds, four shapes, one shared baseline), the CLIs' benches
# alternated, then s44l20's GPU tests (cuda and device_api, every ignored GPU test), so that a
# second call can go straight to the race. Carry: .devx/s43head .devx/s44l20 .devx/s44l21.
# Results under /tmp/r1, tarred into $OUT/r1.tgz; the tables also on stdout and $OUT/summary.md.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r1; rm -rf $R; mkdir -p $R
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
V="s43head s44l20 s44l21"
for v in $V; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
mkdir -p $R/ncu/raw
for s in 4096,2112,7168 4096,7168,2048 4096,24576,1536 4096,4096,7168; do
    for r in 1 2; do
        [ $SECONDS -lt 200 ] || { echo "ncu $s round $r skipped at $SECONDS s"; continue; }
        for v in $V; do
            timeout 120 "$NCU" --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum --csv \
                --kernel-name regex:sm90_gemm_block_fp8_m --launch-count 2 .devx/$v/blockfp8 "${bench[@]}" --mnk $s \
                > $R/ncu/raw/${v}_${s//,/x}.$r.csv 2> $R/ncu/raw/${v}_${s//,/x}.$r.err
        done
    done
done
echo "ncu done at $SECONDS s"
# Each candidate against the shared baseline, through ncu_ab.py's A / B file names.
for v in s44l20 s44l21; do
    d=$R/ncu/$v; mkdir -p $d
    for f in $R/ncu/raw/s43head_*.csv; do b=$(basename $f); ln -sf ../raw/$b $d/ncu_${b#s43head_}; done
    for f in $d/ncu_*.csv; do x=${f%.csv}; r=${x##*.}; sh=${x%.*}; sh=${sh##*/ncu_}; mv $f $d/ncu_${sh}_A.$r.csv; done
    for f in $R/ncu/raw/${v}_*.csv; do b=$(basename $f); x=${b#${v}_}; ln -sf ../raw/$b $d/ncu_${x%%.*}_B.${x#*.}; done
    echo "$v over s43head (ncu, fixed clock):"; python3 ci/h200/ncu_ab.py $d | tee $R/ncu_$v.md | grep "^|" | grep -v inst_exec
done
L="4096,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
    [ $SECONDS -lt 290 ] || { echo "timed round $r skipped at $SECONDS s"; break; }
    for v in $V; do
        .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
    done
done
for v in s44l20 s44l21; do
    echo "$v timed:"; python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_${v}_*.json | paste -sd,) | tee $R/timed_$v.md | grep -v kernel_default
done
echo "A/B done at $SECONDS s"
for t in cuda device_api; do xz -dc .devx/s44l20/$t.xz > .devx/s44l20/$t && chmod +x .devx/s44l20/$t
    OUT=$R T=.devx/s44l20/$t TEST_TIMEOUT=150 bash ci/h200/tests.sh; echo "s44l20 $t tests rc=$? ($SECONDS s)"; done
echo "done at $SECONDS s"
