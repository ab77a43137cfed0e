#!/usr/bin/env bash
# Session 32, call 6 (H200, $OUT set): the thirty-first session's call-6 script, run: is its call 4's slowdown at the single-tile N = 4096 shapes real?
# 7dcc992's CLI (.devx/base) against c3ca59a's (.devx/c3: the same logic there, the kernel laid out
# anew by ptxas), five interleaved rounds of `blockfp8 bench` on those two shapes and one control.
set -u
R=$OUT/r; mkdir -p $R
for v in base c3; do xz -d -T4 .devx/$v/blockfp8.xz; chmod +x .devx/$v/blockfp8; done
S="--mnk 64,4096,7168 --mnk 128,4096,7168 --mnk 64,18432,7168"
for r in 1 2 3 4 5; do
  for v in base c3; do
    timeout 60 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout column-major $S > $R/${v}_$r.json 2>/dev/null; echo "$r $v rc=$?"
  done
done
python3 ci/h200/ab_compare.py $R/base_1.json,$R/base_2.json,$R/base_3.json,$R/base_4.json,$R/base_5.json $R/c3_1.json,$R/c3_2.json,$R/c3_3.json,$R/c3_4.json,$R/c3_5.json | tee $R/ab.md | grep -E "tuned|geomean"
python3 - $R <<'PY'
import json, sys
for v in ("base", "c3"):
    for r in range(1, 6):
        d = json.load(open(f"{sys.argv[1]}/{v}_{r}.json"))
        print(v, r, [round(x["time_us"], 2) for s in d["shapes"] for x in s["measurements"] if x["implementation"] == "tuned"])
PY
tar czf $OUT/r.tgz -C $OUT r
