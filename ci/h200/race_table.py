"""One table from `blockfp8 bench --json` and DeepGEMM's bench JSON (ci/h200/race.sh):
per shape the crate's tuned path (shipped configs), its kernel default, cuBLASLt and DeepGEMM,
in microseconds, with the crate's ratio over each and calc_diff, then geometric means."""
import json
import math
import sys

crate = json.load(open(sys.argv[1]))
dg = {(r["m"], r["n"], r["k"]): r for r in json.load(open(sys.argv[2]))}


def get(meas, impl):
    for x in meas:
        if x["implementation"] == impl:
            return x
    return None


print("| M | N | K | blockfp8 us (path) | kernel default us | cuBLASLt us | DeepGEMM us | DeepGEMM TFLOPS | blockfp8 TFLOPS | vs cuBLASLt | vs DeepGEMM | calc_diff blockfp8 / DeepGEMM |")
print("|--:|--:|--:|--|--:|--:|--:|--:|--:|--:|--:|--|")
r_lt, r_dg = [], []
for s in crate["shapes"]:
    m, n, k = s["m"], s["n"], s["k"]
    meas = s["measurements"]
    tuned, default, vendor = get(meas, "tuned"), get(meas, "kernel_default"), get(meas, "vendor")
    # What users get through the shipped configs: the tuned entry where a file has one, else
    # the no-file default (cuBLASLt).
    ours = tuned or vendor or default
    path = ("tuned " + tuned["config"]) if tuned else ("cuBLASLt" if vendor else "kernel default")
    d = dg.get((m, n, k), {})
    dg_us = d.get("deepgemm_us")
    fl = 2 * m * n * k
    cells = [str(m), str(n), str(k), f"{ours['time_us']:.1f} ({path})", f"{default['time_us']:.1f}" if default else "-", f"{vendor['time_us']:.1f}" if vendor else "-"]
    cells += [f"{dg_us:.1f}" if dg_us else d.get("error", "-")[:40], f"{d['TFLOPS']:.0f}" if dg_us else "-", f"{fl / ours['time_us'] / 1e6:.0f}"]
    lt = vendor["time_us"] / ours["time_us"] if vendor else None
    vd = dg_us / ours["time_us"] if dg_us else None
    if lt:
        r_lt.append(lt)
    if vd:
        r_dg.append(vd)
    cells += [f"{lt:.2f}x" if lt else "-", f"{vd:.2f}x" if vd else "-", f"{ours.get('calc_diff', float('nan')):.1e} / {d.get('calc_diff', float('nan')):.1e}"]
    print("| " + " | ".join(cells) + " |")


def geo(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


print()
print(f"Geometric mean of blockfp8's speed over cuBLASLt: {geo(r_lt):.3f}x ({len(r_lt)} shapes); over DeepGEMM: {geo(r_dg):.3f}x ({len(r_dg)} shapes); "
      f"shapes where DeepGEMM is faster: {sum(1 for v in r_dg if v < 1)}.")
