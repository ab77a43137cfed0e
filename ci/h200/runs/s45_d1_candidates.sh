#!/usr/bin/env bash
# Prepared in session 44 for the next session that is lent the H200 (not run: no device was lent
# in session 44). Cumulative candidates against the shipped source built plainly (.devx/s43head),
# each on top of the one before (l17 is staged but left out of this call, for time):
# - l15 (s43_l15_wgbar_staged.patch, .devx/s43l15): the consumer warpgroups' C barriers split
#   (C buffer: a C_FREE / C_FULL pair per warpgroup, the signalling side arrive-only; staged C:
#   each warpgroup's arrival once its wgmmas are done with the stage, the other's wait,
#   double-buffered by tile parity);
# - l17 (s44_l17_wgbar_wgbox.patch, .devx/s44l17): l15 plus a store-warp tile's last C in boxes
#   of a warpgroup's 64 rows (s43_l16_wgbox.patch: 6 TMA stores a tile against 24, a second C
#   map), its per-warpgroup barrier renumbered past l15's;
# - l18 (s44_l18_wgbar_tilebox.patch, .devx/s44l18): l17 with that C in boxes of the tile's 128
#   rows after one barrier over both warpgroups (3 TMA stores, as DeepGEMM stores a tile);
# - l19 (s44_l19_lastorigin.patch, .devx/s44l19): l18 with the last tile's origin written to
#   shared memory by the store warp, instead of the consumers working it out again (ptxas put
#   that item's four divisions, about 140 instructions, between the last C's barrier and its
#   TMA stores);
# - l20 (s44_l20_nextitem.patch, .devx/s44l20): l19 with the next tile's coordinates worked out
#   while the tile's last wgmmas run (ptxas put those divisions, about 120 instructions of
#   dependent chains, at the head of the tile loop, between a tile's last block and the next
#   tile's first wgmmas, on every tile change; at 4096x24576x1536 a CTA changes tiles 22 times).
# ncu cycles at its fixed clock, every variant in each round on the same shapes (one shared
# baseline; 4096x4096x7168 is a staged-C shape, where l18 and l19 change nothing over l15, so
# they show the noise), then the five CLIs' benches
# alternated, as long as the call's time allows. Carry: .devx/s43head .devx/s43l15 .devx/s44l18
# .devx/s44l19 .devx/s44l20. Results under /tmp/r1, tarred into $OUT/r1.tgz (at most 8 files
# come back from $OUT); the tables also go to stdout and $OUT/summary.md.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r1; rm -rf $R; mkdir -p $R
exec > >(tee $OUT/summary.md) 2>&1
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
V="s43head s43l15 s44l18 s44l19 s44l20"
for v in $V; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
mkdir -p $R/ncu/raw
for s in 4096,2112,7168 4096,7168,2048 4096,24576,1536 4096,4096,7168; do
    for r in 1 2; do
        [ $SECONDS -lt 330 ] || { echo "ncu $s round $r skipped at $SECONDS s"; continue; }
        for v in $V; do
            timeout 120 "$NCU" --metrics gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum --csv \
                --kernel-name regex:sm90_gemm_block_fp8_m --launch-count 2 .devx/$v/blockfp8 "${bench[@]}" --mnk $s \
                > $R/ncu/raw/${v}_${s//,/x}.$r.csv 2> $R/ncu/raw/${v}_${s//,/x}.$r.err
        done
    done
done
echo "ncu done at $SECONDS s"
# Each candidate against the shared baseline, through ncu_ab.py's A / B file names.
for v in s43l15 s44l18 s44l19 s44l20; do
    d=$R/ncu/$v; mkdir -p $d
    for f in $R/ncu/raw/s43head_*.csv; do b=$(basename $f); ln -sf ../raw/$b $d/ncu_${b#s43head_}; done
    for f in $d/ncu_*.csv; do x=${f%.csv}; r=${x##*.}; sh=${x%.*}; sh=${sh##*/ncu_}; mv $f $d/ncu_${sh}_A.$r.csv; done
    for f in $R/ncu/raw/${v}_*.csv; do b=$(basename $f); x=${b#${v}_}; ln -sf ../raw/$b $d/ncu_${x%%.*}_B.${x#*.}; done
    echo "$v over s43head (ncu, fixed clock):"; python3 ci/h200/ncu_ab.py $d | tee $R/ncu_$v.md | grep "^|" | grep -v inst_exec
done
L="4096,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
    [ $SECONDS -lt 420 ] || { echo "timed round $r skipped at $SECONDS s"; break; }
    for v in $V; do
        .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
    done
done
for v in s43l15 s44l18 s44l19 s44l20; do
    echo "$v timed:"; python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_${v}_*.json | paste -sd,) | tee $R/timed_$v.md | grep -v kernel_default
done
echo "done at $SECONDS s"
