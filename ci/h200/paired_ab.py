"""The table of paired_ab.sh: per shape each side's speed over DeepGEMM (the median of its passes'
ratios, each pass's ratio from one process where the side and DeepGEMM alternated), B's speed
over A from those, whether B's passes all lie above or all below A's (else the two sides' passes
overlap: a difference the passes do not resolve), each side's path and B's calc_diff; geometric
means and the count of resolved shapes at the end.

Usage: python3 ci/h200/paired_ab.py DIR   (DIR holding A1/, B1/, A2/, ... from python_race.py)
"""
import glob
import json
import math
import os
import sys


def middle(v):
    """The median (the geometric mean of the middle two for an even count)."""
    v = sorted(v)
    h = len(v) // 2
    return v[h] if len(v) % 2 else math.sqrt(v[h - 1] * v[h])


def pass_rows(paths):
    """{(m, n, k): {"ratios": [...], "path": ..., "calc_diff": ..., "error": ...}} over paired
    python_race.py results (one file per pass): each pass's DeepGEMM time over blockfp8's."""
    shapes = {}
    for path in paths:
        for r in json.load(open(path))["rows"]:
            s = shapes.setdefault((r["m"], r["n"], r["k"]), {"ratios": []})
            if "blockfp8_us" in r and "deepgemm_us" in r:
                s["ratios"].append(r["deepgemm_us"] / r["blockfp8_us"])
            s.setdefault("path", r.get("blockfp8_path"))
            if "blockfp8_calc_diff" in r:
                s.setdefault("calc_diff", r["blockfp8_calc_diff"])
            if "blockfp8_error" in r:
                s["error"] = r["blockfp8_error"]
    return shapes


def side(out, name):
    """pass_rows of side `name`'s passes in `out` (A1/, A2/, ...)."""
    return pass_rows(sorted(glob.glob(os.path.join(out, f"{name}[0-9]*", "python_race.json"))))


def separation(ra, rb):
    """"higher" when every pass of B reads above every pass of A, "lower" when below, else "overlap"."""
    if not ra or not rb:
        return "-"
    return "higher" if min(rb) > max(ra) else "lower" if max(rb) < min(ra) else "overlap"


def geo(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def main():
    out = sys.argv[1]
    a, b = side(out, "A"), side(out, "B")
    if not a or not b:
        sys.exit(f"{out}: no results for side {'A' if not a else 'B'} (see its logs)")
    print("| M | N | K | A path | A over DeepGEMM (passes) | B path | B over DeepGEMM (passes) | B over A | B's passes | B calc_diff |")
    print("|--:|--:|--:|--|--|--|--|--:|--|--|")
    gains, seps = [], []
    for key in sorted(a):
        sa, sb = a[key], b.get(key, {"ratios": []})
        ma = middle(sa["ratios"]) if sa["ratios"] else None
        mb = middle(sb["ratios"]) if sb["ratios"] else None
        gain = mb / ma if ma and mb else None
        gains += [gain] if gain else []

        def cell(s, m):
            return f"{m:.3f} ({' '.join(f'{x:.3f}' for x in s['ratios'])})" if m else s.get("error", "no result")[:60]

        cd = sb.get("calc_diff")
        sep = separation(sa["ratios"], sb["ratios"])
        seps.append(sep)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {sa.get('path')} | {cell(sa, ma)} | {sb.get('path')} | {cell(sb, mb)} | "
              f"{f'{gain:.3f}x' if gain else '-'} | {sep} | {f'{cd:.1e}' if cd is not None else '-'} |")
    print()
    print(f"B over A, the geometric mean over {len(gains)} shapes: {geo(gains):.4f}x")
    print(f"B's passes all above A's at {seps.count('higher')} shapes, all below at {seps.count('lower')}, overlapping at {seps.count('overlap')}.")


if __name__ == "__main__":
    main()
