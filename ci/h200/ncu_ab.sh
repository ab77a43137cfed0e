#!/usr/bin/env bash
# On the H200 ($OUT set): an A/B of two CLI builds (or config folders) by cycles at ncu's fixed
# clock: for each product, ROUNDS rounds of A then B, each `ncu --metrics METRICS` over LAUNCHES
# GEMM launches of `blockfp8 bench --scale-layout column-major` (one repeat), then ncu_ab.py's
# table (B's median over A's per metric). It resolves about 0.5% at large M, where a paired race
# against DeepGEMM (paired_ab.sh) resolves about 1%, but holds the clock, so it does not see
# what the power cap does.
#
# Inputs (environment):
#   CLI_A, CLI_B   the two CLIs (default .device-bin/blockfp8); a path whose file is missing but
#                  whose .xz exists is unpacked first (CLIs travel xz-compressed: 13 MB -> 2 MB)
#   CFG_A, CFG_B   config folders for --config-dir (optional: e.g. force_tile.py files)
#   ROUNDS (2), LAUNCHES (2), KERNEL (ncu kernel-name regex, default sm90_gemm_block_fp8_m),
#   METRICS (default gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum)
#   NCU_ARGS       more ncu options, e.g. '--clock-control none' to count cycles at the clock
#                  the GPU picks (boost, or what the power cap leaves) instead of ncu's base
#   B_DEEPGEMM=1   side B is DeepGEMM's kernel instead of a CLI (one launch a round, through
#                  deepgemm_time.py --warm after an unprofiled warm-up that JIT-compiles it; built
#                  from PEERS, default .peers, into /tmp/dgb/dg when not there yet); KERNEL_DG is
#                  its kernel-name regex (default sm90_fp8_gemm). B / A is then DeepGEMM's
#                  figure over the crate's at the same fixed clock.
# Usage: CLI_B=.devx/x/blockfp8.xz bash ci/h200/ncu_ab.sh M,N,K [M,N,K ...]
#        B_DEEPGEMM=1 bash ci/h200/ncu_ab.sh 4096,4096,7168   (carry .peers too)
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"
[ $# -gt 0 ] || { echo "usage: [CLI_A=..] [CLI_B=..] [CFG_A=..] [CFG_B=..] [ROUNDS=2] bash $0 M,N,K ..."; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
for s in "$@"; do [[ $s =~ ^[0-9]+,[0-9]+,[0-9]+$ ]] || { echo "$s: expected M,N,K"; exit 2; }; done
cli() {  # the CLI at $1, unpacked from $1.xz when only that exists
    local p=${1%.xz}
    if [ ! -x "$p" ] && [ -f "$p.xz" ]; then xz -d -k "$p.xz" && chmod +x "$p"; fi
    [ -x "$p" ] || { echo "no CLI at $p (nor $p.xz)" >&2; return 1; }
    echo "$p"
}
cli_a=$(cli "${CLI_A:-.device-bin/blockfp8}") || exit 2
if [ -n "${B_DEEPGEMM:-}" ]; then
    [ -z "${CLI_B:-}${CFG_B:-}" ] || { echo "B_DEEPGEMM=1 takes no CLI_B or CFG_B"; exit 2; }
    cli_b=""
else
    cli_b=$(cli "${CLI_B:-.device-bin/blockfp8}") || exit 2
fi
for c in "${CFG_A:-}" "${CFG_B:-}"; do [ -z "$c" ] || [ -d "$c" ] || { echo "no config folder $c"; exit 2; }; done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu on this machine"; exit 1; }
metrics=${METRICS:-gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum}
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
if [ -n "${B_DEEPGEMM:-}" ]; then
    peers=${PEERS:-.peers}
    [ -d /tmp/dgb/dg ] || bash "$peers/build_deepgemm.sh" > "$OUT/deepgemm_build.log" 2>&1 \
        || { echo "DeepGEMM build failed: $OUT/deepgemm_build.log"; exit 2; }
    export PYTHONPATH=/tmp/dgb/dg:$here:${PYTHONPATH:-}
    for s in "$@"; do  # its JIT compile, outside the profiled runs
        timeout 300 python3 "$here/deepgemm_time.py" --warm "$s" >> "$OUT/deepgemm_warm.log" 2>&1 \
            || { echo "DeepGEMM cannot run $s: $OUT/deepgemm_warm.log"; exit 2; }
    done
fi
for s in "$@"; do
    for r in $(seq 1 "${ROUNDS:-2}"); do
        for side in A B; do
            if [ $side = A ]; then c=$cli_a; cfg=${CFG_A:-}; else c=$cli_b; cfg=${CFG_B:-}; fi
            f="$OUT/ncu_${s//,/x}_$side.$r"
            if [ $side = B ] && [ -n "${B_DEEPGEMM:-}" ]; then
                kernel=${KERNEL_DG:-sm90_fp8_gemm} launches=1 run=(python3 "$here/deepgemm_time.py" --warm "$s")
            else
                kernel=${KERNEL:-sm90_gemm_block_fp8_m} launches=${LAUNCHES:-2} run=("$c" "${bench[@]}" --mnk "$s" ${cfg:+--config-dir "$cfg"})
            fi
            timeout 120 "$NCU" ${NCU_ARGS:-} --metrics "$metrics" --csv --kernel-name "regex:$kernel" \
                --launch-count "$launches" "${run[@]}" > "$f.csv" 2> "$f.err"
            echo "$s $side round $r rc=$?"
        done
    done
done
python3 "$here/ncu_ab.py" "$OUT" | tee "$OUT/ncu_ab.md"
