#!/usr/bin/env bash
# Session 39, device call 8: consumer warpgroup 1 issuing each tile's first wgmmas once
# warpgroup 0's have completed (OFFSET, s39_offset.patch; the deferred-C tiles, here 128x192
# s4): ncu at its fixed clock against the shipped build, then (if it ran) paired against
# DeepGEMM beside the shipped build. Builds in .devx/s39f/{base,off} (CLIs xz-compressed).
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
X=.devx/s39f
for v in base off; do [ -x $X/$v/blockfp8 ] || { xz -d -k $X/$v/blockfp8.xz && chmod +x $X/$v/blockfp8; }; done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
m=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 1024,18432,7168; do
  for v in base off base off; do
    timeout 60 "$NCU" --metrics $m --csv --kernel-name "regex:sm90_gemm_block_fp8_m128" --launch-count 2 \
      $X/$v/blockfp8 "${bench[@]}" --mnk $s > "$OUT/ncu_${s//,/x}_$v.$RANDOM.csv" 2> /dev/null
    echo "ncu $s $v rc=$?"
  done
done
python3 - "$OUT" <<'PY' | tee "$OUT/ncu_summary.txt"
import csv, glob, io, os, sys, collections, statistics
out = sys.argv[1]; res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(out + "/ncu_*.csv")):
    shape, v = os.path.basename(f)[4:].split(".")[0].rsplit("_", 1)
    txt = open(f).read(); i = txt.find('"ID"')
    if i < 0: continue
    for r in csv.DictReader(io.StringIO(txt[i:])):
        try: res[shape][(v, r["Metric Name"])].append(float(r["Metric Value"].replace(",", "")))
        except (KeyError, ValueError): pass
for shape, d in res.items():
    print(shape)
    for name in sorted({k[1] for k in d}):
        b, t = d.get(("base", name), []), d.get(("off", name), [])
        if b and t: print(f"  {name:32s} base {[round(x) for x in b]}  off {[round(x) for x in t]}  off/base {statistics.median(t)/statistics.median(b):.4f}")
PY
grep -q "off/base" "$OUT/ncu_summary.txt" || { echo "the OFFSET build did not run under ncu; no A/B"; exit 0; }
OUT=$OUT/ab LIB_A=$X/base/libblockfp8_capi.so LIB_B=$X/off/libblockfp8_capi.so PASSES=2 bash ci/h200/paired_ab.sh \
  4096,2112,7168 1024,18432,7168 > "$OUT/ab.txt" 2>&1
tail -7 "$OUT/ab.txt"
