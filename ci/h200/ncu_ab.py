"""B against A in cycles at ncu's fixed clock, from the CSVs `ncu_ab.sh` writes.

Usage: python3 ci/h200/ncu_ab.py DIR

DIR holds `ncu_<M>x<N>x<K>_<A|B>.<round>.csv` (`ncu --csv --metrics ...`, every profiled GEMM
launch a row per metric). Prints per shape and metric both sides' values (launches in round
order) and the ratio of B's median to A's; for gpc__cycles_elapsed.max that is B's time over A's
with the clock held, which resolves about 0.5% where a paired race resolves about 1%.
"""
import csv
import glob
import io
import os
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"ncu_(\d+x\d+x\d+)_([AB])\.(\d+)\.csv$")


def read(folder):
    """{shape: {(side, metric): [values]}} and the kernels each side ran."""
    res = defaultdict(lambda: defaultdict(list))
    kernels = defaultdict(set)
    named = [(m, path) for path in glob.glob(os.path.join(folder, "ncu_*.csv")) if (m := NAME.search(path))]
    for m, path in sorted(named, key=lambda mp: int(mp[0].group(3))):  # (round order)
        shape, side = m.group(1), m.group(2)
        text = open(path, errors="replace").read()
        start = text.find('"ID"')  # (ncu prints its own log lines before the table)
        if start < 0:
            continue
        for row in csv.DictReader(io.StringIO(text[start:])):
            try:
                value = float(row["Metric Value"].replace(",", ""))
            except (KeyError, ValueError):
                continue
            res[shape][(side, row["Metric Name"])].append(value)
            kernels[(shape, side)].add(row.get("Kernel Name", "?").split("(")[0])
    return res, kernels


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    res, kernels = read(sys.argv[1])
    if not res:
        sys.exit(f"{sys.argv[1]}: no ncu CSV with metric rows (did ncu run? see ncu_*.err there)")
    fmt = lambda xs: " ".join(f"{x:.0f}" for x in xs)
    print("| M x N x K | metric | A | B | B / A |")
    print("|--|--|--|--|--:|")
    for shape in sorted(res, key=lambda s: [int(x) for x in s.split("x")]):
        d = res[shape]
        for metric in sorted({k[1] for k in d}):
            a, b = d.get(("A", metric), []), d.get(("B", metric), [])
            if not a or not b:
                print(f"| {shape} | {metric} | {len(a)} values | {len(b)} values | - |")
                continue
            print(f"| {shape} | {metric} | {fmt(a)} | {fmt(b)} | {statistics.median(b) / statistics.median(a):.4f} |")
    for (shape, side), names in sorted(kernels.items()):
        print(f"{shape} {side}: {', '.join(sorted(names))}")


if __name__ == "__main__":
    main()
