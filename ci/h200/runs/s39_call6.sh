#!/usr/bin/env bash
# Session 39, device call 6: a diagnostic build (s39_diag.patch, .devx/s39d) whose 128x192 s4
# consumer warp 0 records per CTA where its cycles go (the tiles' K loops, waits for data and
# for the wgmmas, tile changes), at 4096x2112x7168 and 1024x18432x7168: plain, then under ncu
# (its fixed clock; the dump follows the last launch).
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 1024,18432,7168; do
  .devx/s39d/blockfp8 "${bench[@]}" --mnk $s > "$OUT/plain_${s//,/x}.md" 2> "$OUT/plain_${s//,/x}.diag"
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
"$NCU" --metrics gpc__cycles_elapsed.max --kernel-name "regex:m128n192" --launch-count 1 \
  .devx/s39d/blockfp8 "${bench[@]}" --mnk 4096,2112,7168 > "$OUT/ncu_4096x2112x7168.txt" 2> "$OUT/ncu_4096x2112x7168.diag"
python3 - "$OUT" <<'PY'
import glob, sys, statistics
for f in sorted(glob.glob(sys.argv[1] + "/*.diag")):
    rows = [list(map(int, l.split()[2:])) for l in open(f) if l.startswith("DIAG ")]
    if not rows: print(f, "no DIAG lines"); continue
    # [valid, smid, total, first, loops, changes, full wait, wgmma wait, blocks, tiles, grid]
    tot = [r[2] for r in rows]; loops = [r[4] for r in rows]; blocks = [r[8] for r in rows]
    med = lambda xs: statistics.median(xs)
    print(f.split("/")[-1], "CTAs", len(rows), "grid", rows[0][10], "tiles/CTA", med([r[9] for r in rows]))
    print("  total cycles per CTA median %.0f (min %.0f max %.0f)" % (med(tot), min(tot), max(tot)))
    print("  first tile starts after %.0f; K loops %.0f (%.1f%%); tile changes %.0f" % (med([r[3] for r in rows]), med(loops), 100 * med(loops) / med(tot), med([r[5] for r in rows])))
    print("  per K block: loop %.1f cycles, data wait %.1f, wgmma wait %.1f (blocks/CTA %.0f)" % (
        med([r[4] / r[8] for r in rows if r[8]]), med([r[6] / r[8] for r in rows if r[8]]), med([r[7] / r[8] for r in rows if r[8]]), med(blocks)))
PY
