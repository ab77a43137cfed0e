"""A/B of `blockfp8 bench --json` runs: python3 ab_compare.py A1.json,A2.json B1.json,B2.json
prints per shape the best tuned-path time of each side and B's speed over A, then the geomean."""
import json, math, sys

def best(files):
    out = {}
    for f in files.split(","):
        try:
            d = json.load(open(f))
        except Exception as e:
            print(f"# {f}: {e}")
            continue
        for s in d["shapes"]:
            key = (s["m"], s["n"], s["k"])
            for x in s["measurements"]:
                if x["implementation"] in ("tuned", "kernel_default"):
                    k2 = key + (x["implementation"],)
                    cur = out.get(k2)
                    if cur is None or x["time_us"] < cur[0]:
                        out[k2] = (x["time_us"], x.get("config", ""))
    return out

a, b = best(sys.argv[1]), best(sys.argv[2])
print("| M | N | K | path | A us (cfg) | B us | B over A |")
print("|--:|--:|--:|--|--|--:|--:|")
r = []
for key in sorted(a):
    if key in b:
        x = a[key][0] / b[key][0]
        if key[3] == "tuned":
            r.append(x)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {a[key][0]:.2f} ({a[key][1]}) | {b[key][0]:.2f} | {x:.4f}x |")
if r:
    print(f"geomean (tuned) B over A: {math.exp(sum(map(math.log, r)) / len(r)):.4f}x over {len(r)} shapes")
