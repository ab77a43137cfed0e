"""A same-call A/B of two builds or settings from `blockfp8 bench --json` runs.

Usage: python3 ci/h200/ab_compare.py A1.json[,A2.json...] B1.json[,B2.json...]

Prints, per shape and path (tuned entry, kernel default), the best time of each side over its
runs and B's speed over A, then the geometric mean over the tuned paths."""
import json
import math
import sys


def best(files):
    """(m, n, k, path) -> (fastest time_us over the runs, its config)."""
    out = {}
    for f in files.split(","):
        for s in json.load(open(f))["shapes"]:
            for x in s["measurements"]:
                if x["implementation"] in ("tuned", "kernel_default"):
                    key = (s["m"], s["n"], s["k"], x["implementation"])
                    if key not in out or x["time_us"] < out[key][0]:
                        out[key] = (x["time_us"], x.get("config", ""))
    return out


a, b = best(sys.argv[1]), best(sys.argv[2])
print("| M | N | K | path | A us (config) | B us | B over A |")
print("|--:|--:|--:|--|--|--:|--:|")
ratios = []
for key in sorted(a):
    if key in b:
        x = a[key][0] / b[key][0]
        if key[3] == "tuned":
            ratios.append(x)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {a[key][0]:.2f} ({a[key][1]}) | {b[key][0]:.2f} | {x:.4f}x |")
if ratios:
    print(f"geomean (tuned) B over A: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.4f}x over {len(ratios)} shapes")
