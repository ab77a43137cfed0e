"""Timing race inside PyTorch on one GPU: the blockfp8 package's GEMM against vLLM's Triton
kernel, DeepGEMM and torch's cuBLASLt block-scaled scaled_mm on the 16 anchor shapes, every
contender timed the same way on the same input tensors (one CUDA graph per contender and shape
replaying a pass over rotating input sets of >= 256 MiB and at least 4, median of 15 replays,
per-call time; with --rounds R the replays are split into R rounds that alternate between the
contenders, the order reversed every other round, so that clock drift falls on all alike), each
result checked against a float64 reference after the timings (a time with a wrong result is
dropped). Also: the crate's own graph-timed bench of the same shapes (`blockfp8 bench --json`, so
the binding's cost on the GPU shows as a ratio) and the eager host overhead per call at M=1.

Usage (ci/h200/python_package.sh runs it; race.sh runs the paired form against DeepGEMM):
  python3 ci/h200/python_race.py --out DIR [--peers .peers] [--cli .device-bin/blockfp8]
  python3 ci/h200/python_race.py --out DIR --contenders deepgemm --column-major-scales --rounds 8 \
      --no-eager --no-crate-bench [--no-check] --mnk M,N,K ...
DeepGEMM is used when `import deep_gemm` works (build it with .peers/build_deepgemm.sh and put
it on PYTHONPATH); vLLM's kernel when --peers holds vllm_triton.py (and triton imports).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import torch

import blockfp8
from accuracy import block_scaled_reference, calc_diff
from graph_timing import GraphTimer, median

ANCHORS = [
    (8, 4096, 7168), (8, 7168, 18432), (8, 18432, 7168),
    (64, 4096, 7168), (64, 7168, 18432), (64, 18432, 7168), (64, 24576, 1536), (64, 32768, 512), (64, 7168, 16384),
    (128, 4096, 7168), (128, 7168, 18432), (128, 18432, 7168),
    (1024, 4096, 7168), (1024, 18432, 7168), (2048, 4096, 7168), (4096, 4096, 7168),
]
ROTATE_BYTES = 256 << 20  # as the crate's TimingOptions
WARMUP, REPEATS = 3, 15
DEV = torch.device("cuda", 0)
OUT_DTYPE = torch.bfloat16
COLUMN_MAJOR = False  # --column-major-scales: the activation scales' layout every contender gets
ROUNDS = 1  # --rounds
CHECK = True  # --no-check clears it


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class HostTimer:
    """--cpu-smoke only: host microseconds of `pass_fn()` (no GPU, no graph)."""

    def __init__(self, pass_fn):
        self.pass_fn = pass_fn

    def times_us(self, repeats, warmup=None):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            self.pass_fn()
            times.append((time.perf_counter() - t0) * 1e6)
        return times


def timer(pass_fn):
    """What times one replay of a graph that runs `pass_fn()` once."""
    return HostTimer(pass_fn) if DEV.type == "cpu" else GraphTimer(pass_fn, DEV, WARMUP)


class Inputs:
    """One input set: fp8 A [M, K] and B [N, K] with their scales, made by the package."""

    def __init__(self, m, n, k, seed):
        g = torch.Generator(device=DEV).manual_seed(seed)
        x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16, generator=g)
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16, generator=g) * 0.05
        self.a, self.a_s = blockfp8.per_token_group_quant_fp8(x, 128, column_major_scales=COLUMN_MAJOR)
        self.b, self.b_s = blockfp8.quantize_weight(w)
        self.out = torch.empty(m, n, device=DEV, dtype=OUT_DTYPE)


def reference(inp):
    return block_scaled_reference(inp.a, inp.a_s, inp.b, inp.b_s)


# ---- contenders: make(inp) -> call() computing into a fresh or fixed output ------------------


def blockfp8_contender():
    def make(inp):
        blockfp8.prepare_weight(inp.b, inp.b_s, [128, 128])
        # The public function, as a vLLM user calls it (the eager overhead counts all of it).
        return lambda: blockfp8.w8a8_block_fp8_matmul(inp.a, inp.b, inp.a_s, inp.b_s, [128, 128], OUT_DTYPE)

    return make


def vllm_contender(peers):
    sys.path.insert(0, os.path.abspath(peers))
    from vllm_triton import w8a8_triton_block_scaled_mm  # the peers' launcher of vLLM's kernel

    def make(inp):
        return lambda: w8a8_triton_block_scaled_mm(inp.a, inp.b, inp.a_s, inp.b_s, [128, 128], OUT_DTYPE)

    return make


def deepgemm_contender():
    import deep_gemm

    def make(inp):
        m, k = inp.a.shape
        n = inp.b.shape[0]
        # DeepGEMM's scale layouts (MN-major, TMA-aligned), transformed once outside the timing.
        sfa = deep_gemm.transform_sf_into_required_layout(inp.a_s.contiguous(), m, k, (1, 128, 128), None, True, True)
        sfb = deep_gemm.transform_sf_into_required_layout(inp.b_s.contiguous(), n, k, (1, 128, 128), None, False, True)

        def call():
            deep_gemm.fp8_gemm_nt((inp.a, sfa), (inp.b, sfb), inp.out, disable_ue8m0_cast=True, recipe=(1, 128, 128))
            return inp.out

        return call

    return make


def scaled_mm_contender():
    """torch's cuBLASLt block-scaled path: F.scaled_mm with BlockWise1x128 / 128x128 recipes
    (torch >= 2.10), else torch._scaled_mm with blockwise scale shapes. The scale layouts it
    accepts differ between torch versions: the first variant whose result matches the float64
    reference on the shape's first input set is used for all its sets."""
    import torch.nn.functional as F

    chosen = {}

    def variants(inp):
        a_mn = inp.a_s.t().contiguous().t()  # [M, G], M-major
        b_t = inp.b.t()  # [K, N], column-major
        out = []
        if hasattr(F, "scaled_mm") and hasattr(F, "ScalingType"):
            st = F.ScalingType
            for sa in (a_mn, inp.a_s):
                for sb in (inp.b_s, inp.b_s.t(), inp.b_s.t().contiguous()):
                    out.append(lambda sa=sa, sb=sb: F.scaled_mm(inp.a, b_t, sa, st.BlockWise1x128, sb, st.BlockWise128x128, output_dtype=OUT_DTYPE))
        for sa in (a_mn, inp.a_s):
            for sb in (inp.b_s.t(), inp.b_s):
                out.append(lambda sa=sa, sb=sb: torch._scaled_mm(inp.a, b_t, sa, sb, out_dtype=OUT_DTYPE))
        return out

    def make(inp):
        key = (tuple(inp.a.shape), tuple(inp.b.shape))
        vs = variants(inp)
        if key not in chosen:
            ref, errors = reference(inp), []
            for i, v in enumerate(vs):
                try:
                    if calc_diff(v().float(), ref) < 1e-4:
                        chosen[key] = i
                        break
                    errors.append(f"variant {i}: wrong result")
                except Exception as e:
                    errors.append(f"variant {i}: {type(e).__name__}: {str(e)[:120]}")
            else:
                raise RuntimeError("no scaled_mm scale layout worked: " + "; ".join(errors))
        return vs[chosen[key]]

    return make


def race_shape(m, n, k, contenders):
    per_set = m * k + n * k + 2 * m * n + 4 * (m + n) * math.ceil(k / 128)
    nsets = max(4, min(64, math.ceil(ROTATE_BYTES / per_set)))  # >= 4, as the crate (TimingOptions::copies)
    sets = [Inputs(m, n, k, seed=1000 * i + m + n + k) for i in range(nsets)]
    row = {"m": m, "n": n, "k": k, "sets": nsets, "blockfp8_path": blockfp8.gemm_path(m, n, k, DEV.type)}
    # Timed first, checked after: the float64 reference GEMM run on the GPU just before a
    # timing slowed the timing of the big-weight shapes by 7-9% (H200, 2026-12-01: 64x7168x18432
    # 40.9 us after it, 37.5 without, level with the crate's bench). A wrong result drops its time.
    results, timers = {}, {}
    for name, make in contenders.items():
        try:
            calls = [make(s) for s in sets]
            results[name] = calls[0]().float().clone()
            sync()

            def one_pass(calls=calls):
                for c in calls:
                    c()

            timers[name] = timer(one_pass)
        except Exception as e:  # a contender that cannot run this shape is reported, not fatal
            row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:400]
    samples = {name: [] for name in timers}
    for r in range(ROUNDS):
        for name in list(timers)[:: 1 if r % 2 == 0 else -1]:
            # (Warmed up once: a later round follows the other contender's replays at once.)
            samples[name] += timers[name].times_us(math.ceil(REPEATS / ROUNDS), warmup=WARMUP if r == 0 else 1)
    for name, times in samples.items():
        row[f"{name}_us"] = median(times) / nsets
    del timers
    if CHECK:  # (--no-check: a later pass over shapes an earlier one checked, on the same seeds)
        ref = reference(sets[0])
        for name, got in results.items():
            row[f"{name}_calc_diff"] = calc_diff(got, ref)
            if not row[f"{name}_calc_diff"] < 1e-4:
                row.pop(f"{name}_us", None)
                row[f"{name}_error"] = "wrong result (calc_diff >= 1e-4): time dropped"
        del ref
    del results, sets
    blockfp8.weight_cache.clear()  # the pinned weights hold their tensors
    if DEV.type == "cuda":
        torch.cuda.empty_cache()
    return row


def eager_overhead(contenders, n=4096, k=7168, calls=2000):
    """Host microseconds per eager call at M=1 (launch loop without waiting; GPU work of M=1 is
    shorter than the host work, so the loop is host-bound)."""
    inp = Inputs(1, n, k, seed=7)
    out = {}
    for name, make in contenders.items():
        try:
            c = make(inp)
            for _ in range(50):
                c()
            sync()
            t0 = time.perf_counter()
            for _ in range(calls):
                c()
            host = (time.perf_counter() - t0) / calls * 1e6
            sync()
            out[name] = round(host, 2)
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"[:200]
    blockfp8.weight_cache.clear()
    return out


def sync():
    if DEV.type == "cuda":
        torch.cuda.synchronize()


def crate_bench(cli, shapes):
    """The crate's own graph-timed bench (`blockfp8 bench --json`) of the shapes: {(m,n,k): {impl: us}}."""
    cmd = [cli, "bench", "--backend", DEV.type, "--no-check", "--json"]
    for m, n, k in shapes:
        cmd += ["--mnk", f"{m},{n},{k}"]
    log(" ".join(cmd))
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"blockfp8 bench failed: {res.stderr[-2000:]}")
    report = json.loads(res.stdout)
    return {(s["m"], s["n"], s["k"]): {ms["implementation"]: ms["time_us"] for ms in s["measurements"]} for s in report["shapes"]}, report


def path_key(label):
    return "tuned" if label.startswith("tuned") else "vendor" if label == "vendor" else "kernel_default"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--peers", default=".peers")
    p.add_argument("--cli", default=os.environ.get("BLOCKFP8_CLI", ".device-bin/blockfp8"))
    p.add_argument("--cpu-smoke", action="store_true", help="check this script's plumbing on the CPU: two small shapes, host timing, the package and the crate only")
    p.add_argument("--mnk", action="append", default=[], help="M,N,K instead of the 16 anchor shapes (repeatable)")
    p.add_argument("--contenders", default="vllm_triton,deepgemm,scaled_mm", help="the peers raced beside the package, comma-separated (empty: the package against the crate's bench alone)")
    p.add_argument("--column-major-scales", action="store_true", help="activation scales column-major, as DeepGEMM takes them (default row-major, vLLM's default)")
    p.add_argument("--rounds", type=int, default=1, help="alternating rounds the 15 replays per contender are split into")
    p.add_argument("--no-check", action="store_true", help="no float64 check (a second pass over shapes already checked: the inputs come from the same seeds)")
    p.add_argument("--no-eager", action="store_true", help="skip the eager host-time probe")
    p.add_argument("--no-crate-bench", action="store_true", help="skip the crate's own bench")
    a = p.parse_args()
    global DEV, ANCHORS, COLUMN_MAJOR, ROUNDS, CHECK
    peers = {"vllm_triton": lambda: vllm_contender(a.peers), "deepgemm": deepgemm_contender, "scaled_mm": scaled_mm_contender}
    chosen = [c for c in a.contenders.split(",") if c]
    unknown = [c for c in chosen if c not in peers]
    if unknown or a.rounds < 1:
        p.error(f"unknown contender(s) {unknown} (known: {', '.join(peers)})" if unknown else "--rounds must be at least 1")
    COLUMN_MAJOR, ROUNDS, CHECK = a.column_major_scales, a.rounds, not a.no_check
    if a.mnk:
        try:
            ANCHORS = [tuple(int(x) for x in s.split(",")) for s in a.mnk]
        except ValueError:
            ANCHORS = []
        if not ANCHORS or any(len(t) != 3 or min(t) < 1 for t in ANCHORS):
            p.error(f"--mnk takes M,N,K of positive integers, got {a.mnk}")
    if a.cpu_smoke:
        DEV, ANCHORS = torch.device("cpu"), [(4, 256, 384), (8, 384, 256)]
    os.makedirs(a.out, exist_ok=True)
    contenders = {"blockfp8": blockfp8_contender()}
    notes = []
    for name, factory in () if a.cpu_smoke else ((c, peers[c]) for c in chosen):
        try:
            contenders[name] = factory()
        except Exception as e:
            notes.append(f"{name} not raced: {type(e).__name__}: {e}")
            log(notes[-1])
    result = {"device": torch.cuda.get_device_name(DEV) if DEV.type == "cuda" else "cpu (smoke run)", "torch": torch.__version__, "blockfp8": blockfp8.native_version(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "notes": notes}
    crate = {}
    if a.no_crate_bench:
        notes.append("the crate's own bench not run (--no-crate-bench)")
    elif os.path.exists(a.cli):
        try:
            crate, raw = crate_bench(a.cli, ANCHORS)
            json.dump(raw, open(os.path.join(a.out, "crate_bench.json"), "w"), indent=1)
        except Exception as e:
            notes.append(f"crate bench: {e}")
    else:
        notes.append(f"no crate CLI at {a.cli}: no comparison with the crate's own bench")
    rows = []
    for m, n, k in ANCHORS:
        row = race_shape(m, n, k, contenders)
        mine = crate.get((m, n, k), {}).get(path_key(row["blockfp8_path"]))
        if mine is not None:
            row["crate_bench_us"] = mine
            if "blockfp8_us" in row:
                row["package_over_crate"] = row["blockfp8_us"] / mine
        rows.append(row)
        log(json.dumps(row))
        result["rows"] = rows
        json.dump(result, open(os.path.join(a.out, "python_race.json"), "w"), indent=1)
    if not a.no_eager:
        result["eager_host_us_per_call_m1_n4096_k7168"] = eager_overhead(contenders, calls=20 if a.cpu_smoke else 2000)
    json.dump(result, open(os.path.join(a.out, "python_race.json"), "w"), indent=1)
    names = list(contenders)
    lines = ["| M | N | K | blockfp8 path | " + " | ".join(f"{c} us" for c in names) + " | crate bench us | package/crate |", "|--:|--:|--:|---|" + "--:|" * (len(names) + 2)]
    for r in rows:
        cells = [f"{r[c + '_us']:.1f}" if c + "_us" in r else "n/a" for c in names]
        ratio = f"{r['package_over_crate']:.3f}" if "package_over_crate" in r else "n/a"
        crate_us = f"{r['crate_bench_us']:.1f}" if "crate_bench_us" in r else "n/a"
        lines.append(f"| {r['m']} | {r['n']} | {r['k']} | {r['blockfp8_path']} | " + " | ".join(cells) + f" | {crate_us} | {ratio} |")
    lines.append("")
    if not a.no_eager:
        lines.append(f"Eager host time per call at M=1, N=4096, K=7168 (us): {result['eager_host_us_per_call_m1_n4096_k7168']}")
    lines += [f"- {n}" for n in notes]
    open(os.path.join(a.out, "python_race.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    over = [r for r in rows if r.get("package_over_crate", 1.0) > 1.02]
    if over:
        log(f"{len(over)} shape(s) where the package is more than 2% slower than the crate's bench: {[(r['m'], r['n'], r['k']) for r in over]}")


if __name__ == "__main__":
    main()
