#!/usr/bin/env bash
# Prepared in session 44 for the next session that is lent the H200 (not run: no device was lent
# in session 44). The candidates against the shipped source built plainly (.devx/s43head):
# - l15 (s43_l15_wgbar_staged.patch, .devx/s43l15): the consumer warpgroups' C barriers split
#   (C buffer: a C_FREE / C_FULL pair per warpgroup, the signalling side arrive-only; staged C:
#   each warpgroup's arrival once its wgmmas are done with the stage, the other's wait,
#   double-buffered by tile parity);
# - l17 (s44_l17_wgbar_wgbox.patch, .devx/s44l17): l15 plus a store-warp tile's last C in boxes
#   of a warpgroup's 64 rows (s43_l16_wgbox.patch: 6 TMA stores a tile against 24, a second C
#   map), its per-warpgroup barrier renumbered past l15's;
# - l18 (s44_l18_wgbar_tilebox.patch, .devx/s44l18): l17 with that C in boxes of the tile's 128
#   rows, after one barrier over both warpgroups (3 TMA stores, as DeepGEMM stores a tile).
# ncu cycles at its fixed clock (l15 also on a staged-C shape; l17 / l18 differ from l15 only on
# store-warp tiles), then the four CLIs' benches alternated, as long as the call's time allows.
# Carry: .devx/s43head .devx/s43l15 .devx/s44l17 .devx/s44l18. Results straight under $OUT.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT
V="s43head s43l15 s44l17 s44l18"
for v in $V; do xz -dkf .devx/$v/blockfp8.xz && chmod +x .devx/$v/blockfp8; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
ab() {  # ab NAME CANDIDATE SHAPES...: ncu_ab of the candidate against the shipped source
    local name=$1 cand=$2; shift 2
    OUT=$R/ncu_$name CLI_A=.devx/s43head/blockfp8 CLI_B=.devx/$cand/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh "$@" > $R/ncu_$name.log 2>&1
    echo "$name ($SECONDS s):"; grep "^|" $R/ncu_$name/ncu_ab.md | grep -v inst_exec
}
ab l15 s43l15 4096,2112,7168 4096,7168,2048 4096,4096,7168
ab l17 s44l17 4096,2112,7168 4096,7168,2048 1024,18432,7168
ab l18 s44l18 4096,2112,7168 4096,7168,2048 1024,18432,7168
L="4096,2112,7168 1024,18432,7168 4096,4096,7168 4096,7168,16384 4096,7168,2048 4096,24576,1536"
args() { for s in $L; do echo -n "--mnk $s "; done; }
for r in 1 2 3; do
    [ $SECONDS -lt 480 ] || { echo "timed round $r skipped at $SECONDS s"; break; }
    for v in $V; do
        .devx/$v/blockfp8 bench --backend cuda --no-check --no-progress --scale-layout column-major --repeats 30 --rounds 3 --json $(args) > $R/t_${v}_$r.json 2> $R/t_${v}_$r.err
    done
done
for v in s43l15 s44l17 s44l18; do
    echo "$v timed:"; python3 ci/h200/ab_compare.py $(ls $R/t_s43head_*.json | paste -sd,) $(ls $R/t_${v}_*.json | paste -sd,) | tee $R/timed_$v.md | grep -v kernel_default
done
echo "done at $SECONDS s"
