#!/usr/bin/env bash
# On the H200 ($OUT set): the Hopper race of record. Builds DeepGEMM from a carried copy of the
# peers folder (.peers/, never committed: copy the project's shared peers folder there and name
# it in `carry`), runs `blockfp8 bench` (tuned path through the shipped configs, kernel default,
# cuBLASLt, in the bench's interleaved rounds) on the 16 anchor shapes and DeepGEMM's four table
# shapes, races DeepGEMM on the same shapes in the same call, and prints one table
# (race_table.py). Needs .device-bin/blockfp8 (ci/h200/stage.sh default) and, for the paired
# race, .device-bin/libblockfp8_capi.so (stage.sh python).
# DG_MODE says how DeepGEMM is raced:
#   paired (default)  python_race.py: the crate's package (the same shipped configs and kernels as
#                     the CLI) and DeepGEMM on the same input tensors (quantized Gaussians,
#                     column-major activation scales) in one process, their replays in 8
#                     alternating rounds, each pass a fresh process, PAIRED_PASSES passes
#                     (default 4), each contender its fastest: the two kernels timed alike;
#   alone             deepgemm_time.py: DeepGEMM by itself, each shape in a process of its own
#                     (DG_ISOLATED=0: all in one), DG_PASSES passes (default 2) each shape
#                     keeping its fastest, against the bench's time of the tuned path
#                     (the bench's random fp8 codes, its paths interleaved in one process): the
#                     method of the races of record up to 2026-12-04 00:38 UTC, kept for comparison;
#   both              the two.
# With .device-bin/configs-base (stage.sh with BASE_CONFIGS_REV=REV: an earlier commit's
# configs) the same bench also runs through those files, and the table gets their times and the
# shipped files' speed over them: a re-tune measured in one call. With BASE_ENV="VAR=value" the
# third bench runs the shipped files under that environment instead, and with BASE_ARGS="bench
# arguments" with those arguments, and with BASE_BIN=path another build's CLI (a kernel change
# raced against the build before it in one call). CRATE_ARGS (default `--scale-layout
# column-major`) are the crate bench's own arguments: column-major activation scales are the
# only layout DeepGEMM takes (vLLM's per_token_group_quant_fp8(column_major_scales=True)).
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
B=.device-bin
P=${PEERS:-.peers}
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt"; date -u >> "$OUT/gpu.txt"
shapes="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
bash "$P/build_deepgemm.sh" > "$OUT/deepgemm_build.log" 2>&1 &
dg_build=$!
# The crate's bench runs while DeepGEMM's extension compiles (CPU work only; its JIT warm-up,
# which launches kernels, waits for the bench).
crate_args=(${CRATE_ARGS---scale-layout column-major})
timeout 420 $B/blockfp8 bench --backend cuda --no-progress --json ${crate_args[@]+"${crate_args[@]}"} "${args[@]}" > "$OUT/crate.json" 2> "$OUT/crate.err"
echo "crate bench rc=$?"
# The third bench, when asked for: the command before `bench`, its extra arguments, its label.
base=(); extra=(); label=""
if [ -n "${BASE_ENV:-}" ]; then
    # The same bench through the shipped files under another environment (BASE_ENV="VAR=value ..."):
    # a launch-side change measured in one call.
    base=(env $BASE_ENV "$B/blockfp8"); label=$BASE_ENV
elif [ -n "${BASE_ARGS:-}" ]; then
    base=("$B/blockfp8"); extra=($BASE_ARGS); label=$BASE_ARGS
elif [ -n "${BASE_BIN:-}" ]; then
    # (A CLI carried xz-compressed, as .devx/ holds them, is unpacked first.)
    if [ ! -x "$BASE_BIN" ] && [ -f "$BASE_BIN.xz" ]; then xz -d -k "$BASE_BIN.xz" && chmod +x "$BASE_BIN"; fi
    base=("$BASE_BIN"); label="base build"
elif [ -d $B/configs-base ]; then
    base=("$B/blockfp8"); extra=(--config-dir "$B/configs-base"); label="base configs"
fi
third=()
if [ ${#base[@]} -gt 0 ]; then
    timeout 300 "${base[@]}" bench --backend cuda --no-progress --no-check --json ${extra[@]+"${extra[@]}"} "${args[@]}" > "$OUT/crate_base.json" 2> "$OUT/crate_base.err"
    echo "crate bench, $label rc=$?"
    # (A third bench that wrote nothing leaves the table to the other columns.)
    if [ -s "$OUT/crate_base.json" ]; then third=("$OUT/crate_base.json" "$label"); fi
fi
wait $dg_build
# (DG_PRINT_CONFIGS: the log keeps the tile, stages, SM count and multicast DeepGEMM picks per shape.)
( export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} DG_PRINT_CONFIGS=1; for s in $shapes; do python3 "$here/deepgemm_time.py" --warm "$s" & done; wait ) > "$OUT/deepgemm_warm.log" 2>&1
mode=${DG_MODE:-paired}
alone_json=""
if [ "$mode" = alone ] || [ "$mode" = both ]; then
    # One DeepGEMM timing run: deepgemm_time.py with the given arguments.
    dg_time() { PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} timeout "$1" python3 "$here/deepgemm_time.py" "${@:2}" >> "$OUT/deepgemm.log" 2>&1; }
    shape_dir=$(mktemp -d)  # per-shape results (DG_ISOLATED), read by the table, not returned
    for p in $(seq 1 "${DG_PASSES:-2}"); do
        f="$OUT/deepgemm.json"; [ "$p" -gt 1 ] && f="$OUT/deepgemm_$p.json"
        if [ "${DG_ISOLATED:-1}" != 0 ]; then
            # One process per shape: DeepGEMM timed alone ran 4096x24576x1536 in 234 us, three turns
            # alike, and 238-284 us after the other shapes in one process (H200, 2026-12-02).
            # (A shape whose process failed leaves no file; the table marks it.)
            failed=0
            for s in $shapes; do
                sf="$shape_dir/$p.${s//,/x}.json"  # (no comma: the table splits its list on commas)
                if dg_time 60 --json "$sf" --mnk "$s"; then alone_json="${alone_json:+$alone_json,}$sf"; else failed=$((failed + 1)); fi
            done
            echo "deepgemm alone, pass $p: $failed shape(s) failed"
        else
            dg_time 300 --json "$f" "${args[@]}" && alone_json="${alone_json:+$alone_json,}$f"
            echo "deepgemm alone, pass $p rc=$?"
        fi
    done
fi
paired_json=""
if [ "$mode" = paired ] || [ "$mode" = both ]; then
    site=$(bash "$here/package_site.sh" $B/libblockfp8_capi.so)  # (the staged library)
    for p in $(seq 1 "${PAIRED_PASSES:-4}"); do
        check=(); [ "$p" -gt 1 ] && check=(--no-check)  # the first pass checks the same seeds' results
        PYTHONPATH=$site:/tmp/dgb/dg:$here:${PYTHONPATH:-} timeout 400 python3 "$here/python_race.py" --out "$OUT/paired_$p" \
            --contenders deepgemm --column-major-scales --rounds 8 --no-eager --no-crate-bench ${check[@]+"${check[@]}"} "${args[@]}" \
            > "$OUT/paired_$p.log" 2>&1
        echo "paired race, pass $p rc=$?"
        [ -s "$OUT/paired_$p/python_race.json" ] && paired_json="${paired_json:+$paired_json,}$OUT/paired_$p/python_race.json"
    done
fi
table=(--paired "$paired_json" --alone "$alone_json")
[ ${#third[@]} -gt 0 ] && table+=(--third "${third[0]}" --third-label "${third[1]}")
python3 "$here/race_table.py" "$OUT/crate.json" "${table[@]}" | tee "$OUT/race.md"
