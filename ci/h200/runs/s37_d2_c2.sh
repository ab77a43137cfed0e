#!/usr/bin/env bash
# Session 37, device call 2: the weight-multicast pairs with C deferred (git show
# 952f683:ci/h200/runs/s36_c2defer.patch; .devx/c2d/libblockfp8_capi.so) raced against DeepGEMM
# paired (python_race.py, as race.sh DG_MODE=paired) at the eight M >= 1024 race shapes: the same
# patched library through the shipped configs (A) and through force_tile.py files naming each
# shape's shipped tile, group and ring as a CTA pair (B, .devx/c2d/cfg), A B A B in fresh processes.
R=$OUT; W=$R/w; mkdir -p $W
date -u > $W/times.txt
bash .peers/build_deepgemm.sh > $W/dg_build.log 2>&1
shapes="1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
args=(); for s in $shapes; do args+=(--mnk "$s"); done
( export PYTHONPATH=/tmp/dgb/dg; for s in $shapes; do python3 ci/h200/deepgemm_time.py --warm "$s" & done; wait ) > $W/dg_warm.log 2>&1
site=$(mktemp -d) && mkdir -p $site/blockfp8/_lib && cp python/blockfp8/*.py $site/blockfp8/ && cp .devx/c2d/libblockfp8_capi.so $site/blockfp8/_lib/
date -u >> $W/times.txt
for p in 1 2; do
  for arm in A B; do
    check=(); [ $p -gt 1 ] && check=(--no-check)
    cfg=(); [ $arm = B ] && cfg=(env BLOCKFP8_CONFIG_DIR=$PWD/.devx/c2d/cfg)
    ${cfg[@]+"${cfg[@]}"} env PYTHONPATH=$site:/tmp/dgb/dg timeout 200 python3 ci/h200/python_race.py --out $W/$arm$p --contenders deepgemm --column-major-scales --rounds 4 --no-eager --no-crate-bench ${check[@]+"${check[@]}"} "${args[@]}" > $W/$arm$p.log 2>&1
    echo "$arm$p rc=$? $(date -u)" >> $W/times.txt
  done
done
python3 - $W <<'PY'
import json, sys, math
w = sys.argv[1]
def best(arm):
    out = {}
    for p in (1, 2):
        try: rows = json.load(open(f"{w}/{arm}{p}/python_race.json"))["rows"]
        except Exception as e: print(arm, p, e); continue
        for r in rows:
            b = out.setdefault((r["m"], r["n"], r["k"]), {})
            for key in ("blockfp8_us", "deepgemm_us"):
                if key in r: b[key] = min(r[key], b.get(key, 1e9))
            b.setdefault("path", r["blockfp8_path"])
            for key in ("blockfp8_calc_diff", "blockfp8_error"):
                if key in r: b.setdefault(key, r[key])
    return out
A, B = best("A"), best("B")
print("| M | N | K | A path | A us | DG(A) us | A vs DG | B path | B us | DG(B) us | B vs DG | B calc_diff | B/A (over DG) |")
ra, rb = [], []
for key in A:
    a, b = A[key], B.get(key, {})
    x = a["deepgemm_us"] / a["blockfp8_us"]; ra.append(x)
    y = b["deepgemm_us"] / b["blockfp8_us"] if "blockfp8_us" in b else float("nan"); rb.append(y)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {a['path']} | {a['blockfp8_us']:.1f} | {a['deepgemm_us']:.1f} | {x:.3f} | {b.get('path')} | {b.get('blockfp8_us', float('nan')):.1f} | {b.get('deepgemm_us', float('nan')):.1f} | {y:.3f} | {b.get('blockfp8_calc_diff', b.get('blockfp8_error'))} | {y / x:.3f} |")
g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print(f"geomean over DG: A {g(ra):.3f}  B {g(rb):.3f}")
PY
tar czf $R/w.tgz -C $R w
