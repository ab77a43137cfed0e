"""One table from `blockfp8 bench --json` and DeepGEMM's bench JSON (ci/h200/race.sh; several
DeepGEMM files comma-separated, passes or single shapes, give each shape its fastest run; a shape
with none is marked):
per shape the crate's tuned path (shipped configs), its kernel default, cuBLASLt and DeepGEMM,
in microseconds, with the crate's ratio over each and calc_diff, then geometric means. With a
third JSON (`blockfp8 bench --config-dir` of an earlier commit's configs, race.sh with
.device-bin/configs-base), two more columns: that path's time and the shipped path's speed over it;
a fourth argument names that third run (race.sh's BASE_ENV)."""
import json
import math
import sys

crate = json.load(open(sys.argv[1]))
# DeepGEMM: one JSON, or several passes comma-separated, of which each shape keeps its fastest.
dg = {}
for path in filter(None, sys.argv[2].split(",")):
    for r in json.load(open(path)):
        key = (r["m"], r["n"], r["k"])
        if key not in dg or ("deepgemm_us" in r and r["deepgemm_us"] < dg[key].get("deepgemm_us", float("inf"))):
            dg[key] = r
base = {(x["m"], x["n"], x["k"]): x for x in json.load(open(sys.argv[3]))["shapes"]} if len(sys.argv) > 3 else None


def get(meas, impl):
    for x in meas:
        if x["implementation"] == impl:
            return x
    return None


def users_path(meas):
    """What users get through the configs: the tuned entry where a file has one, else the
    no-file default (cuBLASLt)."""
    tuned, default, vendor = get(meas, "tuned"), get(meas, "kernel_default"), get(meas, "vendor")
    ours = tuned or vendor or default
    return ours, ("tuned " + tuned["config"]) if tuned else ("cuBLASLt" if vendor else "kernel default")


base_label = sys.argv[4] if len(sys.argv) > 4 else "base configs"
extra = f" {base_label} us (path) | vs {base_label} |" if base else ""
print("| M | N | K | blockfp8 us (path) | kernel default us | cuBLASLt us | DeepGEMM us | DeepGEMM TFLOPS | blockfp8 TFLOPS | vs cuBLASLt | vs DeepGEMM | calc_diff blockfp8 / DeepGEMM |" + extra)
print("|--:|--:|--:|--|--:|--:|--:|--:|--:|--:|--:|--|" + ("--|--:|" if base else ""))
r_lt, r_dg, r_base = [], [], []
for s in crate["shapes"]:
    m, n, k = s["m"], s["n"], s["k"]
    meas = s["measurements"]
    default, vendor = get(meas, "kernel_default"), get(meas, "vendor")
    ours, path = users_path(meas)
    d = dg.get((m, n, k), {"error": "no result (see deepgemm.log)"})
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
    cells += [f"{lt:.2f}x" if lt else "-", f"{vd:.2f}x" if vd else "-", f"{ours.get('calc_diff') or float('nan'):.1e} / {d.get('calc_diff') or float('nan'):.1e}"]
    if base is not None:
        b = base.get((m, n, k))
        if b:
            b_ours, b_path = users_path(b["measurements"])
            r_base.append(b_ours["time_us"] / ours["time_us"])
            cells += [f"{b_ours['time_us']:.1f} ({b_path})", f"{r_base[-1]:.3f}x"]
        else:
            cells += ["-", "-"]
    print("| " + " | ".join(cells) + " |")


def geo(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


print()
print(f"Geometric mean of blockfp8's speed over cuBLASLt: {geo(r_lt):.3f}x ({len(r_lt)} shapes); over DeepGEMM: {geo(r_dg):.3f}x ({len(r_dg)} shapes); "
      f"shapes where DeepGEMM is faster: {sum(1 for v in r_dg if v < 1)}.")
if base is not None:
    print(f"Geometric mean of blockfp8's speed over {base_label}: {geo(r_base):.3f}x ({len(r_base)} shapes).")
