#!/usr/bin/env bash
# Session 39, device call 7: a diagnostic build (s39_stamps.patch, .devx/s39d) whose 128x192 s4
# consumer warp 0 stamps (SM clock) its CTA's start and each work item's K-loop start and end into
# a global buffer, dumped after the run: the K loop's cycles per block against the tile changes,
# at 4096x2112x7168 and 1024x18432x7168, plain and under ncu (its fixed clock).
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 1024,18432,7168; do
  .devx/s39d/blockfp8 "${bench[@]}" --mnk $s > "$OUT/plain_${s//,/x}.md" 2> "$OUT/plain_${s//,/x}.diag"
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
"$NCU" --metrics gpc__cycles_elapsed.max --kernel-name "regex:m128n192" --launch-count 1 \
  .devx/s39d/blockfp8 "${bench[@]}" --mnk 4096,2112,7168 > "$OUT/ncu_4096x2112x7168.txt" 2> "$OUT/ncu_4096x2112x7168.diag"
python3 - "$OUT" <<'PY' | tee "$OUT/stamps.txt"
import glob, sys, statistics as st
med = st.median
for f in sorted(glob.glob(sys.argv[1] + "/*.diag")):
    lines = [l for l in open(f) if l.startswith("DIAG ")]
    if not lines: print(f.split("/")[-1], "no DIAG line"); continue
    v = list(map(int, lines[-1].split()[1:]))
    cstart = v[4096:]; ctas = [c for c in range(512) if cstart[c]]
    grid = len(ctas)
    items = [w for w in range(2048) if v[2 * w] or v[2 * w + 1]]
    d = lambda a, b: (b - a) % (1 << 32)
    loops = [d(v[2 * w], v[2 * w + 1]) for w in items]
    first = [d(cstart[c], v[2 * c]) for c in ctas if v[2 * c]]
    trans = [d(v[2 * w + 1], v[2 * (w + grid)]) for w in items if w + grid in items]
    per_cta = [d(cstart[c], v[2 * max(w for w in items if w % grid == c) + 1]) for c in ctas]
    print(f.split("/")[-1], f"CTAs {grid}, items {len(items)}")
    print(f"  K loop per tile: median {med(loops):.0f} cycles (min {min(loops)}, max {max(loops)}); per K block {med(loops) / 56:.1f}")
    print(f"  first tile's loop starts {med(first):.0f} cycles after the consumer starts; tile changes median {med(trans):.0f} (max {max(trans) if trans else 0})")
    print(f"  consumer start to last loop end: median {med(per_cta):.0f}, max {max(per_cta)}")
PY
