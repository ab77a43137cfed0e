#!/usr/bin/env bash
# On the H200 ($OUT set, DeepGEMM built in /tmp/dgb/dg by race.sh or .peers/build_deepgemm.sh):
# the crate's tuned path and DeepGEMM each timed alone, one shape a process, the two alternating
# which goes first, ALONE_PASSES passes (default 3). The crate runs `blockfp8 bench --paths tuned`
# (no other path heating the board between its replays; column-major activation scales, the
# layout DeepGEMM takes), DeepGEMM `deepgemm_time.py`: the same graph timing over rotating copies,
# 3 warm-up and 15 timed replays, median. Absolute TFLOPS at the power cap depend on what ran
# just before; the race's bench interleaves four paths, so this is the like-for-like figure
# for a kernel's own TFLOPS, and DeepGEMM's beside it says what the board allowed that minute.
# Usage: [ALONE_MNK="4096,4096,7168 4096,7168,16384"] [ALONE_PASSES=3] bash ci/h200/alone.sh
# Results: $OUT/alone.md (the table), $OUT/alone/ (each process's JSON and log).
set -u
: "${OUT:?set OUT to the results folder}"
here=$(cd "$(dirname "$0")" && pwd)
B=${CLI:-.device-bin/blockfp8}
dir=$OUT/alone
mkdir -p "$dir"
shapes=${ALONE_MNK:-4096,4096,7168 4096,7168,16384}
crate() {
    timeout 120 "$B" bench --backend cuda --paths tuned --rounds 1 --no-check --no-progress --json \
        --scale-layout column-major --mnk "$1" > "$dir/crate_$2.${1//,/x}.json" 2>> "$dir/crate.log"
    echo "crate $1 pass $2 rc=$?"
}
deepgemm() {
    PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} timeout 120 python3 "$here/deepgemm_time.py" \
        --json "$dir/deepgemm_$2.${1//,/x}.json" --mnk "$1" >> "$dir/deepgemm.log" 2>&1
    echo "deepgemm $1 pass $2 rc=$?"
}
for p in $(seq 1 "${ALONE_PASSES:-3}"); do
    for s in $shapes; do
        if [ $((p % 2)) = 1 ]; then crate "$s" "$p"; deepgemm "$s" "$p"; else deepgemm "$s" "$p"; crate "$s" "$p"; fi
    done
done
python3 - "$dir" $shapes << 'EOF' | tee "$OUT/alone.md"
import glob, json, os, statistics, sys

folder, shapes = sys.argv[1], sys.argv[2:]


def tflops(path, crate):
    try:
        d = json.load(open(path))
        if crate:
            return [m["tflops"] for s in d["shapes"] for m in s["measurements"]][0]
        return d[0]["TFLOPS"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None  # a failed process: the log says why


print("| M | N | K | crate tuned TFLOPS (fastest, median; passes) | DeepGEMM TFLOPS (fastest, median; passes) | crate / DeepGEMM (fastest) |")
print("|--:|--:|--:|---|---|--:|")
for s in shapes:
    tag = s.replace(",", "x")
    cols = []
    for who in ("crate", "deepgemm"):
        files = sorted(glob.glob(os.path.join(folder, f"{who}_*.{tag}.json")))
        v = [x for x in (tflops(f, who == "crate") for f in files) if x is not None]
        cols.append(v)
    cell = lambda v: f"{max(v):.0f}, {statistics.median(v):.0f}; {' / '.join(f'{x:.0f}' for x in v)}" if v else "-"
    ratio = f"{max(cols[0]) / max(cols[1]):.3f}" if cols[0] and cols[1] else "-"
    m, n, k = s.split(",")
    print(f"| {m} | {n} | {k} | {cell(cols[0])} | {cell(cols[1])} | {ratio} |")
EOF
