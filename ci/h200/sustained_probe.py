"""Sustained load on the H200 (power-capped): SM clock, board power and time per call while one
kernel runs alone, back to back for a few seconds (eager launches over 4 rotating input sets):
the blockfp8 package's GEMM (shipped configs, column-major activation scales) against DeepGEMM
on the same fp8 values and scales. The race (race.sh) times short graph replays, each behind an
idle gap, so the GPU runs at a higher clock there than under a prefill server's steady load;
this probe shows both kernels at the clock the power cap leaves them.

nvidia-smi samples clocks.sm and power.draw every 50 ms; each segment reports its per-call time
(CUDA events over the whole segment) and the median clock / power of the samples inside it (its
first 0.5 s dropped). Contenders alternate, two segments each per shape.

Usage (on the H200; DeepGEMM built with .peers/build_deepgemm.sh, the package on PYTHONPATH with
BLOCKFP8_LIB naming the C ABI library, as ci/h200/python_package.sh installs it):
  python3 ci/h200/sustained_probe.py --out DIR [--seconds 3] [--mnk M,N,K ...]
Prints a markdown table; DIR keeps nvidia-smi's samples (smi.csv)."""
import argparse
import os
import subprocess
import sys
import time
from datetime import datetime

ap = argparse.ArgumentParser(description="SM clock, power and time per call under sustained load")
ap.add_argument("--out", required=True)
ap.add_argument("--seconds", type=float, default=3.0)
ap.add_argument("--mnk", action="append", default=[], help="M,N,K (repeatable; default: three large-M race shapes)")
args = ap.parse_args()
out, SECONDS = args.out, args.seconds
SHAPES = []
for text in args.mnk:
    try:
        m, n, k = (int(x) for x in text.split(","))
    except ValueError:
        ap.error(f"--mnk {text!r}: expected three integers M,N,K")
    if min(m, n, k) < 1 or k % 128 != 0:
        ap.error(f"--mnk {text!r}: sizes must be positive and K a multiple of 128 (DeepGEMM's 1D2D kernel)")
    SHAPES.append((m, n, k))
SHAPES = SHAPES or [(4096, 4096, 7168), (4096, 2112, 7168), (4096, 7168, 16384)]
if args.seconds <= 0.5:
    ap.error("--seconds must exceed 0.5 (each segment's first 0.5 s is dropped)")

# (After the arguments: a bad one fails before torch, DeepGEMM and the GPU are touched.)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blockfp8  # noqa: E402
import deepgemm_time as dgt  # noqa: E402
from accuracy import calc_diff  # noqa: E402

os.makedirs(out, exist_ok=True)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits", "-lms", "50"],
                       stdout=open(os.path.join(out, "smi.csv"), "w"))
time.sleep(1.0)


def segment(label, fn):
    fn()
    torch.cuda.synchronize()
    calls, t0 = 0, time.time()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    while time.time() - t0 < SECONDS:
        for _ in range(20):
            fn()
        calls += 20
        if calls % 200 == 0:
            torch.cuda.synchronize()  # (keeps the launch queue short)
    e1.record()
    torch.cuda.synchronize()
    t1 = time.time()
    us = e0.elapsed_time(e1) * 1000 / calls
    time.sleep(1.0)  # idle gap between segments
    return {"label": label, "t0": t0, "t1": t1, "us": us, "calls": calls}


segs = []
for (m, n, k) in SHAPES:
    sets_dg, sets_bf = [], []
    for i in range(4):
        dg_args, (a, a_s, b, b_s) = dgt.problem(m, n, k, seed=i + 1)
        sets_dg.append(dg_args)
        # the same fp8 values and scales; activation scales column-major (vLLM's layout)
        a_cm = a_s.t().contiguous().t()
        sets_bf.append((a, b, a_cm, b_s.contiguous()))
    it = {"i": 0}

    def run_dg():
        p = sets_dg[it["i"] % 4]; it["i"] += 1
        dgt.run(p)

    def run_bf():
        a, b, a_cm, bs = sets_bf[it["i"] % 4]; it["i"] += 1
        blockfp8.w8a8_block_fp8_matmul(a, b, a_cm, bs, [128, 128], output_dtype=torch.bfloat16)

    for label, fn in [("blockfp8", run_bf), ("deepgemm", run_dg), ("blockfp8", run_bf), ("deepgemm", run_dg)]:
        s = segment(f"{m}x{n}x{k} {label}", fn)
        segs.append(s)
        print(f"{s['label']}: {s['us']:.1f} us/call over {s['calls']} calls", flush=True)
    # Both kernels' results on the first input set agree (each is checked against float64 by
    # the race; here a wrong launch would show).
    a, b, a_cm, bs = sets_bf[0]
    mine = blockfp8.w8a8_block_fp8_matmul(a, b, a_cm, bs, [128, 128], output_dtype=torch.bfloat16)
    dgt.run(sets_dg[0])
    torch.cuda.synchronize()
    print(f"{m}x{n}x{k}: calc_diff(blockfp8, DeepGEMM) = {calc_diff(mine.double(), sets_dg[0][4].double()):.1e}", flush=True)
time.sleep(0.5)
smi.terminate()
rows = []
for line in open(os.path.join(out, "smi.csv")):
    parts = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((ts, float(parts[1]), float(parts[2]), float(parts[3])))
    except (ValueError, IndexError):
        pass
# nvidia-smi prints local time; the host clock is the same machine's.
limit = subprocess.run(["nvidia-smi", "--query-gpu=power.limit,clocks.max.sm", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
print(f"\npower limit, max SM clock: {limit}\n")
print("| segment | us/call | TFLOPS | SM MHz (median) | power W (median) | temp C | samples |")
print("|--|--:|--:|--:|--:|--:|--:|")
for s in segs:
    m, n, k = (int(x) for x in s["label"].split()[0].split("x"))
    inside = sorted(r for r in rows if s["t0"] + 0.5 <= r[0] <= s["t1"])
    med = lambda i: sorted(r[i] for r in inside)[len(inside) // 2] if inside else float("nan")
    print(f"| {s['label']} | {s['us']:.1f} | {2 * m * n * k / s['us'] / 1e6:.0f} | {med(1):.0f} | {med(2):.0f} | {med(3):.0f} | {len(inside)} |")
