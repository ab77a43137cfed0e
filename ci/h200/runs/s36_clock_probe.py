"""Session 36 diagnostic (H200): SM clock and board power while each kernel runs alone, back to
back for a few seconds (eager launches on 4 rotating input sets), at the large-M race shapes:
the blockfp8 package's GEMM (shipped configs, column-major activation scales) against DeepGEMM
(built from .peers) on the same inputs. nvidia-smi samples clocks.sm and power.draw every 50 ms;
each segment reports its per-call time (CUDA events) and the median clock / power of the
samples inside it (the first 0.5 s dropped). Usage: python3 s36_clock_probe.py OUT_DIR"""
import os
import subprocess
import sys
import time
from datetime import datetime

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import blockfp8  # noqa: E402
import deepgemm_time as dgt  # noqa: E402

out = sys.argv[1]
SECONDS = 3.0
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
        torch.cuda.synchronize() if calls % 200 == 0 else None
    e1.record()
    torch.cuda.synchronize()
    t1 = time.time()
    us = e0.elapsed_time(e1) * 1000 / calls
    time.sleep(1.0)  # idle gap between segments
    return {"label": label, "t0": t0, "t1": t1, "us": us, "calls": calls}


segs = []
for (m, n, k) in [(4096, 4096, 7168), (4096, 2112, 7168), (4096, 7168, 16384)]:
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
print("| segment | us/call | TFLOPS | SM MHz (median) | power W (median) | temp C | samples |")
print("|--|--:|--:|--:|--:|--:|--:|")
for s in segs:
    m, n, k = (int(x) for x in s["label"].split()[0].split("x"))
    inside = sorted(r for r in rows if s["t0"] + 0.5 <= r[0] <= s["t1"])
    med = lambda i: sorted(r[i] for r in inside)[len(inside) // 2] if inside else float("nan")
    print(f"| {s['label']} | {s['us']:.1f} | {2 * m * n * k / s['us'] / 1e6:.0f} | {med(1):.0f} | {med(2):.0f} | {med(3):.0f} | {len(inside)} |")
