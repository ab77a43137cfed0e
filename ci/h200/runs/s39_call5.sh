#!/usr/bin/env bash
# Session 39, device call 5: the wgmma descriptors advanced by 32-bit adds of their address word,
# the constant high word moved in (s39_desc.patch; staged in .device-bin by stage.sh default and
# python). The GPU tests; ncu at its fixed clock against the shipped build (.devx/s39cli, carried
# xz-compressed), alternating; then the race (DeepGEMM paired, 4 passes) with the shipped
# build's bench beside it.
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
base=.devx/s39cli/blockfp8.base
[ -x $base ] || { xz -d -k $base.xz && chmod +x $base; }
bash ci/h200/tests.sh > "$OUT/tests.txt" 2>&1
cat "$OUT/tests.txt"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
m=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 4096,4096,7168 128,4096,7168; do
  for v in base desc base desc; do
    if [ $v = base ]; then cli=$base; else cli=.device-bin/blockfp8; fi
    timeout 60 "$NCU" --metrics $m --csv --kernel-name "regex:sm90_gemm_block_fp8_m" --launch-count 2 \
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
        b, t = d.get(("base", name), []), d.get(("desc", name), [])
        if b and t: print(f"  {name:32s} base {[round(x) for x in b]}  desc {[round(x) for x in t]}  desc/base {statistics.median(t)/statistics.median(b):.4f}")
PY
DG_MODE=paired PAIRED_PASSES=4 BASE_BIN=$base OUT=$OUT/race bash ci/h200/race.sh > "$OUT/race.txt" 2>&1
tail -12 "$OUT/race.txt"
tar -czf "$OUT/all.tgz" -C "$OUT" --exclude all.tgz . 2>/dev/null; true
