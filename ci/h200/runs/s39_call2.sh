#!/usr/bin/env bash
# Session 39, device call 2: ncu at its fixed clock, the shipped build against BS_TILE
# (.devx/s39cli/blockfp8.{base,bst}), 3 launches of the crate's GEMM per shape and build, the
# two builds alternating per shape: cycles, instructions, tensor-pipe activity.
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
m=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,lts__t_bytes.sum
for s in 4096,2112,7168 1024,18432,7168 4096,24576,1536 4096,7168,2048 128,18432,7168; do
  for v in base bst base bst; do
    timeout 120 "$NCU" --metrics $m --csv --kernel-name "regex:sm90_gemm_block_fp8_m128" --launch-count 3 \
      .devx/s39cli/blockfp8.$v bench --backend cuda --mnk $s --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major \
      > "$OUT/ncu_${s//,/x}_$v.$RANDOM.csv" 2> /dev/null
  done
done
python3 - "$OUT" <<'PY'
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
        b, t = d.get(("base", name), []), d.get(("bst", name), [])
        if b and t: print(f"  {name:70s} base {statistics.median(b):14.1f} ({len(b)})  bst {statistics.median(t):14.1f} ({len(t)})  bst/base {statistics.median(t)/statistics.median(b):.4f}")
PY
