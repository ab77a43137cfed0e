#!/usr/bin/env bash
# Session 39, device call 4: the two consumer warpgroups taking strict turns at issuing their
# wgmmas (ORDER, s39_order.patch, .devx/s39o): the GPU tests, ncu at its fixed clock against the
# shipped build (3 launches a side, alternating), then paired against DeepGEMM beside it.
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
X=.devx/s39o
T=$X/cuda-default bash ci/h200/tests.sh > "$OUT/tests.txt" 2>&1
cat "$OUT/tests.txt"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
m=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 1024,18432,7168 128,18432,7168; do
  for v in base order base order; do
    if [ $v = base ]; then cli=.device-bin/blockfp8; else cli=$X/blockfp8; fi
    timeout 120 "$NCU" --metrics $m --csv --kernel-name "regex:sm90_gemm_block_fp8_m128" --launch-count 2 \
      $cli "${bench[@]}" --mnk $s > "$OUT/ncu_${s//,/x}_$v.$RANDOM.csv" 2> /dev/null
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
        b, t = d.get(("base", name), []), d.get(("order", name), [])
        if b and t: print(f"  {name:32s} base {[round(x) for x in b]}  order {[round(x) for x in t]}  order/base {statistics.median(t)/statistics.median(b):.4f}")
PY
OUT=$OUT/ab LIB_B=$X/libblockfp8_capi.so PASSES=4 bash ci/h200/paired_ab.sh \
  128,18432,7168 1024,18432,7168 4096,2112,7168 > "$OUT/ab.txt" 2>&1
tail -16 "$OUT/ab.txt"
tar -czf "$OUT/all.tgz" -C "$OUT" --exclude all.tgz . 2>/dev/null; true
