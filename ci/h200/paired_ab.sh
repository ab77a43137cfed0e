#!/usr/bin/env bash
# On the H200 ($OUT set): an A/B of two builds or config folders of the crate, each raced paired
# against DeepGEMM (python_race.py --contenders deepgemm --column-major-scales --rounds 8, as
# race.sh's paired race), A and B in alternating fresh processes, PASSES rounds of the two (default
# 3). At large M a kernel's time moves with the board's warmth by more than most changes are worth
# (BENCHMARKS.md, the race of record); each side's ratio over DeepGEMM, timed beside it, does not.
# paired_ab.py prints per shape both sides' ratios over DeepGEMM (median of the passes) and B's
# speed over A from them.
#
# Inputs (environment):
#   LIB_A, LIB_B   the C ABI libraries of the two sides (default .device-bin/libblockfp8_capi.so)
#   CFG_A, CFG_B   config folders for BLOCKFP8_CONFIG_DIR (optional: e.g. force_tile.py files)
#   PASSES         rounds of A then B (default 3)
# DeepGEMM is built from the carried peers folder (.peers, PEERS to change it) unless /tmp/dgb holds
# a build already.
# Usage: LIB_B=.devx/x/libblockfp8_capi.so bash ci/h200/paired_ab.sh M,N,K [M,N,K ...]
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"
[ $# -gt 0 ] || { echo "usage: [LIB_A=..] [LIB_B=..] [CFG_A=..] [CFG_B=..] [PASSES=3] bash $0 M,N,K ..."; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
P=${PEERS:-.peers}
lib_a=${LIB_A:-.device-bin/libblockfp8_capi.so}; lib_b=${LIB_B:-.device-bin/libblockfp8_capi.so}
# Each side's package with its own library (a missing library stops here, before DeepGEMM's build).
site_a=$(bash "$here/package_site.sh" "$lib_a") && site_b=$(bash "$here/package_site.sh" "$lib_b") || exit 2
args=(); for s in "$@"; do args+=(--mnk "$s"); done
# (Built once per machine: a second A/B in the same device call reuses /tmp/dgb.)
if ls /tmp/dgb/dg/*.so > /dev/null 2>&1; then echo "DeepGEMM already built in /tmp/dgb" > "$OUT/deepgemm_build.log"
else bash "$P/build_deepgemm.sh" > "$OUT/deepgemm_build.log" 2>&1 || { echo "DeepGEMM build failed (deepgemm_build.log)"; exit 3; }; fi
( export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-}; for s in "$@"; do python3 "$here/deepgemm_time.py" --warm "$s" & done; wait ) > "$OUT/deepgemm_warm.log" 2>&1
for p in $(seq 1 "${PASSES:-3}"); do
    for side in A B; do
        if [ $side = A ]; then s=$site_a; cfg=${CFG_A:-}; else s=$site_b; cfg=${CFG_B:-}; fi
        check=(); [ "$p" -gt 1 ] && check=(--no-check)  # (the first pass checks each side's results)
        env ${cfg:+BLOCKFP8_CONFIG_DIR=$(cd "$cfg" && pwd)} PYTHONPATH="$s:/tmp/dgb/dg:$here" timeout 300 python3 "$here/python_race.py" \
            --out "$OUT/$side$p" --contenders deepgemm --column-major-scales --rounds 8 --no-eager --no-crate-bench \
            ${check[@]+"${check[@]}"} "${args[@]}" > "$OUT/$side$p.log" 2>&1
        echo "$side pass $p rc=$?"
    done
done
python3 "$here/paired_ab.py" "$OUT" | tee "$OUT/paired_ab.md"
