"""Times DeepGEMM's SM90 1D2D fp8 GEMM (`deep_gemm.fp8_gemm_nt`, built from the carried peers
folder) exactly as `blockfp8 bench` times the crate: one CUDA graph per shape over rotating input
copies of >= 256 MiB (at least 4, at most 32), each timed replay behind an untimed one (so the host's
submission is not counted), median of 15 replays, per call. calc_diff against float64 once every
shape is timed, so that no reference GEMM runs on the GPU between two timings.

Usage (ci/h200/race.sh runs it; DeepGEMM on PYTHONPATH):
  python3 ci/h200/deepgemm_time.py --json OUT [--mnk M,N,K ...]   time the shapes
  python3 ci/h200/deepgemm_time.py --warm M,N,K                   JIT-compile one shape only
Writes [{"m", "n", "k", "deepgemm_us", "TFLOPS", "calc_diff"} or {..., "error"}].
"""

import argparse
import json
import math

import torch
import deep_gemm

from accuracy import block_scaled_reference, calc_diff
from graph_timing import cuda_graph_us

FP8 = torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8).max
ROTATE_BYTES = 256 << 20  # as the crate's TimingOptions
WARMUP, REPEATS = 3, 15
DEV = torch.device("cuda", 0)


def quant_rows(x):
    """Per token per 128-wide K group."""
    m, k = x.shape
    g = x.float().view(m, k // 128, 128)
    s = g.abs().amax(-1).clamp(min=1e-10) / FP8_MAX
    return (g / s[..., None]).clamp(-FP8_MAX, FP8_MAX).to(FP8).view(m, k), s


def quant_blocks(w):
    """Per 128x128 block (K a multiple of 128; N zero-padded to one)."""
    n, k = w.shape
    nb = math.ceil(n / 128)
    padded = torch.zeros(nb * 128, k, device=w.device, dtype=torch.float32)
    padded[:n] = w.float()
    v = padded.view(nb, 128, k // 128, 128)
    s = v.abs().amax(dim=(1, 3)).clamp(min=1e-10) / FP8_MAX
    q = (v / s[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(FP8).view(nb * 128, k)[:n].contiguous()
    return q, s


def problem(m, n, k, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    a, a_s = quant_rows(torch.randn(m, k, device=DEV, dtype=torch.bfloat16, generator=g))
    b, b_s = quant_blocks(torch.randn(n, k, device=DEV, dtype=torch.bfloat16, generator=g))
    # DeepGEMM's scale layouts (MN-major, TMA-aligned), made once outside the timing.
    sfa = deep_gemm.transform_sf_into_required_layout(a_s.contiguous(), m, k, (1, 128, 128), None, True, True)
    sfb = deep_gemm.transform_sf_into_required_layout(b_s.contiguous(), n, k, (1, 128, 128), None, False, True)
    out = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    return (a, sfa, b, sfb, out), (a, a_s, b, b_s)


def run(p):
    deep_gemm.fp8_gemm_nt((p[0], p[1]), (p[2], p[3]), p[4], disable_ue8m0_cast=True, recipe=(1, 128, 128))


def graph_us(sets):
    def one_pass():
        for p in sets:
            run(p)

    return cuda_graph_us(one_pass, DEV, WARMUP, REPEATS) / len(sets)


def time_shape(m, n, k):
    """The timing row, and (result, inputs) for the check after every shape is timed."""
    row = {"m": m, "n": n, "k": k}
    kept = None
    try:
        first, host = problem(m, n, k, seed=m + n + k)
        run(first)
        torch.cuda.synchronize()
        kept = (first[4].clone(), host)
        per_set = m * k + n * k + 2 * m * n + 4 * (m + n) * math.ceil(k / 128)
        copies = max(4, min(32, math.ceil(ROTATE_BYTES / per_set)))  # as TimingOptions::copies
        sets = [first] + [tuple(t.clone() for t in first) for _ in range(copies - 1)]
        row["deepgemm_us"] = graph_us(sets)
        row["TFLOPS"] = 2 * m * n * k / row["deepgemm_us"] / 1e6
        row["copies"] = copies
        del sets, first
    except Exception as e:  # a shape DeepGEMM refuses is reported, not fatal
        row["error"] = f"{type(e).__name__}: {e}"[:300]
    torch.cuda.empty_cache()
    return row, kept


def check(row, kept):
    """calc_diff against float64. Run once every shape is timed: a float64 reference GEMM on
    the GPU slowed the next timing of the big-weight shapes by 7-9% (python_race.py says more)."""
    if kept is not None:
        got, host = kept
        row["calc_diff"] = calc_diff(got, block_scaled_reference(*host))
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json")
    p.add_argument("--warm")
    p.add_argument("--mnk", action="append", default=[])
    a = p.parse_args()
    if a.warm:
        m, n, k = (int(x) for x in a.warm.split(","))
        first, _ = problem(m, n, k, seed=1)
        run(first)
        torch.cuda.synchronize()
        return
    timed = []
    for s in a.mnk:
        m, n, k = (int(x) for x in s.split(","))
        timed.append(time_shape(m, n, k))
    rows = []
    for row, kept in timed:
        check(row, kept)
        rows.append(row)
        print(json.dumps(row), flush=True)
    json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
