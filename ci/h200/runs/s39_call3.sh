#!/usr/bin/env bash
# Session 39, device call 3: the crate's weight-multicast pairs with C deferred (s39_c2defer.patch,
# .devx/s39c2, tiles forced by the config folder .devx/s39c2/cfg) at 4096x2112x7168 and
# 4096x4096x7168: ncu at its fixed clock against the shipped build (cycles, instructions), ncu
# --set full of the pair at 4096x2112x7168 (per-instruction samples, to set beside DeepGEMM's),
# then paired against DeepGEMM beside the shipped build.
set -u
: "${OUT:?set OUT}"; mkdir -p "$OUT"
X=.devx/s39c2
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
m=gpc__cycles_elapsed.max,sm__cycles_active.avg,smsp__inst_executed.sum,lts__t_bytes.sum
bench=(bench --backend cuda --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress --scale-layout column-major)
for s in 4096,2112,7168 4096,4096,7168; do
  for v in base c2 base c2; do
    if [ $v = base ]; then cli=.device-bin/blockfp8; cfg=(); else cli=$X/blockfp8; cfg=(--config-dir $X/cfg); fi
    timeout 120 "$NCU" --metrics $m --csv --kernel-name "regex:sm90_gemm_block_fp8_m128" --launch-count 2 \
      $cli "${bench[@]}" --mnk $s "${cfg[@]}" > "$OUT/ncu_${s//,/x}_$v.$RANDOM.csv" 2> /dev/null
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
        try: res[shape][(v, r["Metric Name"], r["Kernel Name"][:40])].append(float(r["Metric Value"].replace(",", "")))
        except (KeyError, ValueError): pass
for shape, d in res.items():
    print(shape)
    for k in sorted(d): print("  ", k, [round(x) for x in d[k]])
PY
timeout 200 "$NCU" --set full --import-source no --kernel-name "regex:sm90_gemm_block_fp8_m128n192" --launch-count 1 -o "$OUT/rep_c2" \
  $X/blockfp8 "${bench[@]}" --mnk 4096,2112,7168 --config-dir $X/cfg > "$OUT/ncu_full.log" 2>&1
"$NCU" -i "$OUT/rep_c2.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_c2.csv" 2>&1
"$NCU" -i "$OUT/rep_c2.ncu-rep" --page details > "$OUT/details_c2.txt" 2>&1
rm -f "$OUT/rep_c2.ncu-rep"
OUT=$OUT/ab CFG_B=$X/cfg LIB_B=$X/libblockfp8_capi.so PASSES=4 bash ci/h200/paired_ab.sh 4096,2112,7168 4096,4096,7168 > "$OUT/ab.txt" 2>&1
tail -8 "$OUT/ab.txt"
tar -czf "$OUT/all.tgz" -C "$OUT" --exclude all.tgz . 2>/dev/null; true
