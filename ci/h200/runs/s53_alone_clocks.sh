#!/usr/bin/env bash
# On the H200 ($OUT set): why DeepGEMM runs ~3% faster than the crate when each is timed alone
# at M = 4096 while the paired race has them level. Runs ci/h200/alone.sh (ALONE_PASSES passes,
# default 4) with nvidia-smi sampling SM clock, power and temperature every 50 ms, and records when
# each process ran, so $OUT/clocks.md gives each kernel's mean SM clock and power while it ran.
# A kernel that draws less power per FLOP keeps a higher clock under the 700 W cap.
# As run on 2026-12-05 (BENCHMARKS.md, the race of record): the table came back empty. Each process
# times a few to a dozen ms of GPU work and no 50 ms sample read above 212 W, so alone the kernels run
# far below the power cap and this sampling cannot resolve them; its $OUT/alone.md is the record it left.
# Carry .devx/s51 and .peers. Usage: [ALONE_PASSES=4] bash ci/h200/runs/s53_alone_clocks.sh
set -u
: "${OUT:?}"
mkdir -p .device-bin
xz -dc .devx/s51/blockfp8.xz > .device-bin/blockfp8 && chmod +x .device-bin/blockfp8 || exit 2
[ -d /tmp/dgb/dg ] || bash .peers/build_deepgemm.sh > "$OUT/deepgemm_build.log" 2>&1 || { echo "DeepGEMM build failed"; exit 2; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 50 > "$OUT/smi.csv" &
smi=$!
# alone.sh prints "crate S pass P rc=R" after each process; stamp each line with the time.
{ echo start; ALONE_PASSES=${ALONE_PASSES:-4} bash ci/h200/alone.sh; } | while IFS= read -r l; do echo "$(date -u +%Y/%m/%d\ %H:%M:%S.%N) $l"; done > "$OUT/stamps.log"
kill $smi
cat "$OUT/alone.md"
python3 - "$OUT" << 'PY' | tee "$OUT/clocks.md"
import datetime as dt, sys
out = sys.argv[1]
t = lambda s: dt.datetime.strptime(s[:26], "%Y/%m/%d %H:%M:%S.%f")
rows = []
for l in open(f"{out}/smi.csv"):
    p = [x.strip() for x in l.split(",")]
    try:
        rows.append((t(p[0]), float(p[1]), float(p[2]), float(p[3])))
    except (ValueError, IndexError):
        pass
prev = None
print("| process | samples > 300 W | mean SM MHz | mean W | max C |")
print("|---|--:|--:|--:|--:|")
for l in open(f"{out}/stamps.log"):
    end, what = t(l[:26]), l.split(" ", 2)[2].strip()
    if prev is not None and "rc=" in what:
        busy = [r for r in rows if prev <= r[0] <= end and r[2] > 300]
        if busy:
            n = len(busy)
            print(f"| {what} | {n} | {sum(r[1] for r in busy)/n:.0f} | {sum(r[2] for r in busy)/n:.0f} | {max(r[3] for r in busy):.0f} |")
    prev = end
PY
