"""One table from race.sh's results (the issue-19 race): per shape the crate's tuned path
(shipped configs), its kernel default and cuBLASLt from `blockfp8 bench --json` (timed in that
bench's interleaved rounds), then DeepGEMM:
  --paired F[,F...]  python_race.py's rows (the package, i.e. the same configs and kernels, and
                     DeepGEMM on the same input tensors in one process, alternating rounds),
                     several passes keeping each contender's fastest: the race's headline ratio;
  --alone F[,F...]   deepgemm_time.py's rows (DeepGEMM timed by itself, each file a pass or a
                     single shape, each shape its fastest), against the bench's tuned time.
A shape without a result is marked. Geometric means at the end. With --third F (another
`blockfp8 bench --json`: an earlier commit's configs, another environment or build; its label
--third-label) two more columns: that path's time and the shipped path's speed over it."""
import argparse
import json

from paired_ab import geo, middle, pass_rows

ap = argparse.ArgumentParser()
ap.add_argument("crate")
ap.add_argument("--paired", default="")
ap.add_argument("--alone", default="")
ap.add_argument("--third")
ap.add_argument("--third-label", default="base configs")
args = ap.parse_args()

crate = json.load(open(args.crate))


def fastest(paths, rows_of, keys):
    """{(m, n, k): row}: per key in `keys` the fastest time over the files; every other field
    from the first file that has it (calc_diff comes from the checked pass; an error shows
    only where no pass has the time)."""
    best = {}
    for path in filter(None, paths.split(",")):
        for r in rows_of(json.load(open(path))):
            b = best.setdefault((r["m"], r["n"], r["k"]), {})
            for key, v in r.items():
                if key in keys:
                    b[key] = min(v, b.get(key, v))
                else:
                    b.setdefault(key, v)
    return best


paired = fastest(args.paired, lambda j: j["rows"], ("blockfp8_us", "deepgemm_us"))
# Each pass's own ratio too: their median per shape is the check on the fastest-of-passes ratio
# (large-M times drift by a few percent between passes as the board nears its power cap).
pass_ratios = {key: s["ratios"] for key, s in pass_rows(list(filter(None, args.paired.split(",")))).items()}
alone = fastest(args.alone, lambda j: j, ("deepgemm_us",))
third = {(x["m"], x["n"], x["k"]): x for x in json.load(open(args.third))["shapes"]} if args.third else None


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


def us(v):
    return f"{v:.1f}" if v else "-"


def sci(v):
    return f"{v:.1e}" if v is not None else "-"


head = ["M", "N", "K", "blockfp8 us (path)", "kernel default us", "cuBLASLt us", "vs cuBLASLt"]
if args.paired:
    head += ["blockfp8 beside DeepGEMM us", "DeepGEMM us", "blockfp8 TFLOPS", "DeepGEMM TFLOPS", "vs DeepGEMM", "per-pass ratios (median)"]
if args.alone:
    head += ["DeepGEMM alone us", "vs DeepGEMM alone"]
head += ["calc_diff blockfp8 (bench / f64) / DeepGEMM"]
if third is not None:
    head += [f"{args.third_label} us (path)", f"vs {args.third_label}"]
print("| " + " | ".join(head) + " |")
print("|" + "|".join("--" if h.endswith("(path)") or h.startswith("calc_diff") else "--:" for h in head) + "|")
r_lt, r_pair, r_median, r_alone, r_third, mismatched = [], [], [], [], [], []
for s in crate["shapes"]:
    m, n, k = s["m"], s["n"], s["k"]
    fl = 2 * m * n * k
    meas = s["measurements"]
    default, vendor = get(meas, "kernel_default"), get(meas, "vendor")
    ours, path = users_path(meas)
    lt = vendor["time_us"] / ours["time_us"] if vendor else None
    r_lt += [lt] if lt else []
    cells = [str(m), str(n), str(k), f"{ours['time_us']:.1f} ({path})", us(default and default["time_us"]), us(vendor and vendor["time_us"]), f"{lt:.2f}x" if lt else "-"]
    p = paired.get((m, n, k), {})
    if args.paired:
        b_us, d_us = p.get("blockfp8_us"), p.get("deepgemm_us")
        ratio = d_us / b_us if b_us and d_us else None
        r_pair += [ratio] if ratio else []
        if p.get("blockfp8_path") and {"vendor": "cuBLASLt"}.get(p["blockfp8_path"], p["blockfp8_path"]) != path:
            mismatched.append(f"{m}x{n}x{k}: package {p['blockfp8_path']}, bench {path}")
        per_pass = sorted(pass_ratios.get((m, n, k), []))
        mid = middle(per_pass) if per_pass else None
        r_median += [mid] if mid else []
        cells += [us(b_us), us(d_us) if d_us else p.get("deepgemm_error", "no result")[:40], f"{fl / b_us / 1e6:.0f}" if b_us else "-", f"{fl / d_us / 1e6:.0f}" if d_us else "-", f"{ratio:.3f}x" if ratio else "-"]
        cells += [" ".join(f"{x:.3f}" for x in per_pass) + (f" ({mid:.3f})" if mid else "")]
    a = alone.get((m, n, k), {})
    if args.alone:
        a_us = a.get("deepgemm_us")
        ratio = a_us / ours["time_us"] if a_us else None
        r_alone += [ratio] if ratio else []
        cells += [us(a_us) if a_us else a.get("error", "no result")[:40], f"{ratio:.3f}x" if ratio else "-"]
    cells += [f"{sci(ours.get('calc_diff'))} / {sci(p.get('blockfp8_calc_diff'))} / {sci(p.get('deepgemm_calc_diff', a.get('calc_diff')))}"]
    if third is not None:
        b = third.get((m, n, k))
        if b:
            b_ours, b_path = users_path(b["measurements"])
            r_third.append(b_ours["time_us"] / ours["time_us"])
            cells += [f"{b_ours['time_us']:.1f} ({b_path})", f"{r_third[-1]:.3f}x"]
        else:
            cells += ["-", "-"]
    print("| " + " | ".join(cells) + " |")


def behind(v):
    return sum(1 for x in v if x < 1)


print()
print(f"Geometric mean of blockfp8's speed over cuBLASLt (in the bench): {geo(r_lt):.3f}x ({len(r_lt)} shapes).")
if args.paired:
    print(f"Over DeepGEMM, paired (same inputs, one process, alternating rounds), each contender's fastest pass: {geo(r_pair):.3f}x ({len(r_pair)} shapes); shapes where DeepGEMM is faster: {behind(r_pair)}.")
    print(f"Over DeepGEMM, paired, the median of each shape's per-pass ratios: {geo(r_median):.3f}x ({len(r_median)} shapes); shapes where DeepGEMM is faster: {behind(r_median)}.")
if args.alone:
    print(f"Over DeepGEMM timed alone (against the bench's time): {geo(r_alone):.3f}x ({len(r_alone)} shapes); shapes where DeepGEMM is faster: {behind(r_alone)}.")
if third is not None:
    print(f"Geometric mean of blockfp8's speed over {args.third_label}: {geo(r_third):.3f}x ({len(r_third)} shapes).")
for x in mismatched:
    print(f"- path differs between the package and the bench at {x}")
