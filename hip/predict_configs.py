#!/usr/bin/env python3
"""Predicted AMD configs from the HIP GEMM's static report (no AMD GPU: a model, not timings).

  python3 hip/predict_configs.py OUT_DIR/hip_static_report.md configs/        # write the files
  python3 hip/predict_configs.py OUT_DIR/hip_static_report.md --table         # MI300X anchor table

For each device (MI300X, MI325X: gfx942; MI355X: gfx950), DeepSeek-V3 shape (N, K) and batch
size M, every bf16 tile of the default build is scored with the model below and the fastest
is written as a vLLM-format entry carrying "blockfp8_source": "predicted" and
"blockfp8_predicted_for": <arch>. The model (hip/README.md, "Predicted configs"):

  per-trip inputs, read from the static report of that architecture's listing:
    mfma = MFMA cycles of one main-loop trip per wave, valu = its VALU instructions,
    ds_reads = its LDS reads, occ = waves per SIMD (registers and LDS);
  G = tiles * splits workgroups (splits: the kernel's rule, kernels.rs GemmKernel::k_splits);
  r = resident workgroups per CU = min(occ * 4 / warps, ceil(G / CUs)); rounds = ceil(G / (CUs * r));
  ws = r * warps / 4 waves per SIMD;
  issue = ws*mfma + 4*ws*valu            if ws == 1 (fold waits on its own MFMAs)
        = max(ws*mfma, 4*ws*valu) + 4*valu   otherwise (other waves' MFMAs hide the VALU);
  load  = r * (BM + BN) * BK / 64        (L2 -> CU at 64 B/clk);
  lds   = (r*warps*ds_reads*1024 + r*(BM+BN)*BK) / 128   (LDS at 128 B/clk, 16-byte reads);
  lat   = 1500 / ws                      (global-load latency one trip of prefetch must hide);
  trip  = max(issue, load, lds, lat) + 64  (two barriers);
  compute = rounds * ceil(K tiles / splits) * trip / (clock * CU_EFFICIENCY)   (0.33, fitted, below);
  dram    = (N*K + M*K + 2*M*N + [splits > 1] 8*splits*M*N) / (0.8 * HBM bandwidth);
  time    = max(compute, dram) + 2.5 us.
It ranks tiles; its absolute times are not measurements and are labelled predictions.
"""
import json
import math
import os
import re
import sys

DEVICES = {
    # name: (arch, CUs, clock GHz, HBM TB/s)
    "AMD_Instinct_MI300X": ("gfx942", 304, 2.1, 5.3),
    "AMD_Instinct_MI325X": ("gfx942", 304, 2.1, 6.0),
    "AMD_Instinct_MI355X": ("gfx950", 256, 2.4, 8.0),
}
# DeepSeek-V3's dense block-FP8 GEMM shapes (N, K) at tensor parallel 1 and 8 (the set the
# shipped H200 configs cover), then those tp 2 and tp 4 add (`blockfp8 tune --model deepseek-v3
# --tp-size 2|4` lists them).
SHAPES = [(12288, 7168), (1536, 7168), (2112, 7168), (24576, 1536), (24576, 7168), (3072, 1536), (3072, 7168),
          (32768, 512), (36864, 7168), (4096, 512), (4096, 7168), (4608, 7168), (512, 7168), (576, 7168),
          (7168, 16384), (7168, 18432), (7168, 2048), (7168, 2304), (7168, 256),
          # tp 2
          (12288, 1536), (16384, 512), (18432, 7168), (2048, 7168), (6144, 7168), (7168, 1024), (7168, 8192), (7168, 9216),
          # tp 4
          (1024, 7168), (6144, 1536), (7168, 4096), (7168, 4608), (7168, 512), (8192, 512), (9216, 7168)]
BATCHES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096]
NAME = re.compile(r"gemm_block_fp8_m(\d+)n(\d+)k(\d+)w(\d+)s2i(\d+)_bf16$")


def read_report(path):
    """{arch: {(bm, bn, bk, w, nk): (mfma_cycles, valu, occ)}} from the main-loop rows."""
    tiles = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 12 or cells[7] != "main":
            continue
        m = NAME.match(cells[1])
        if not m:
            continue
        bm, bn, bk, w, nk = map(int, m.groups())
        mfma, valu, occ = int(cells[9]), int(cells[10]), int(cells[6])
        ds_reads = int(cells[14].split("/")[0])
        tiles.setdefault(cells[0], {})[(bm, bn, bk, w, nk)] = (mfma * (32 if nk == 32 else 16), valu, occ, ds_reads)
    return tiles


def k_splits(bm, bn, bk, m, n, k, cus):
    """kernels.rs GemmKernel::k_splits (rule part)."""
    iters = max(1, -(-k // bk))
    tiles = max(1, -(-m // bm) * -(-n // bn))
    want = 1 if tiles >= cus else max(1, min(16, -(-cus // tiles), iters // 4))
    return min(max(want, 1), iters)


# The fraction of its cycle-count rate a CU sustains (clocks under load, issue and memory
# stalls the trip model does not see), applied to the whole trip so that the tiles' relative
# costs stay those of the static report: the model's one fitted parameter, set so that the
# model run on AITER's own tile for 4096x4608x7168 (128x128x128, 32x32 MFMA) gives AITER's
# published 711 TFLOPS (0.33 -> 728); every other row of the table is out of sample.
CU_EFFICIENCY = 0.33


def predict_us(tile, stats, m, n, k, dev):
    bm, bn, bk, w, nk = tile
    mfma, valu, occ, ds_reads = stats
    _, cus, ghz, tbs = dev
    splits = k_splits(bm, bn, bk, m, n, k, cus)
    g = -(-m // bm) * -(-n // bn) * splits
    r = max(1, min(occ * 4 // w, -(-g // cus)))
    rounds = -(-g // (cus * r))
    ws = max(1, r * w // 4)
    if ws == 1:
        issue = mfma + 4 * valu
    else:
        issue = max(ws * mfma, 4 * ws * valu) + 4 * valu
    load = r * (bm + bn) * bk / 64
    lds = (r * w * ds_reads * 64 * 16 + r * (bm + bn) * bk) / 128
    lat = 1500 / ws
    trip = max(issue, load, lds, lat) + 64
    trips = -(-(-(-k // bk)) // splits)
    compute_us = rounds * trips * trip / (ghz * 1e3 * CU_EFFICIENCY)
    dram = n * k + m * k + 2 * m * n + (8 * splits * m * n if splits > 1 else 0)
    dram_us = dram / (0.8 * tbs * 1e6)
    return max(compute_us, dram_us) + 2.5, splits


def best(tiles, m, n, k, dev):
    scored = []
    for tile, stats in sorted(tiles.items()):
        us, splits = predict_us(tile, stats, m, n, k, dev)
        scored.append((us, tile, splits))
    scored.sort()
    return scored[0]


def entry(tile, m, bm_tiles, arch):
    bm, bn, bk, w, nk = tile
    return {
        "BLOCK_SIZE_K": bk,
        "BLOCK_SIZE_M": bm,
        "BLOCK_SIZE_N": bn,
        "GROUP_SIZE_M": 8 if bm_tiles > 1 else 1,
        "kpack": 1,
        "matrix_instr_nonkdim": nk,
        "num_warps": w,
        "blockfp8_source": "predicted",
        "blockfp8_predicted_for": arch,
    }


def write_configs(report, out_dir):
    tiles = read_report(report)
    for name, dev in DEVICES.items():
        arch = dev[0]
        if arch not in tiles:
            sys.exit(f"the report has no {arch} rows: build with BLOCKFP8_HIP_ARCHS including {arch}")
        for n, k in SHAPES:
            d = {}
            for m in BATCHES:
                _, tile, _ = best(tiles[arch], m, n, k, dev)
                d[str(m)] = entry(tile, m, -(-m // tile[0]), arch)
            fname = f"N={n},K={k},device_name={name},dtype=fp8_w8a8,block_shape=[128,128].json"
            with open(os.path.join(out_dir, fname), "w") as f:
                f.write(json.dumps(d, indent=4) + "\n")
    print(f"wrote {len(DEVICES) * len(SHAPES)} files to {out_dir}")


# Published MI300X block-scaled FP8 figures (AITER CK a8w8_blockscale, measured by others;
# shared/tools/amd-static/README.md): (M, N, K) -> TFLOPS.
AITER = [((64, 4608, 7168), 192), ((1024, 4608, 7168), 572), ((4096, 4608, 7168), 711),
         ((16384, 7168, 2304), 772), ((32768, 7168, 2048), 798)]


def table(report):
    tiles = read_report(report)
    dev = DEVICES["AMD_Instinct_MI300X"]
    print("| M | N | K | predicted tile | splits | predicted us | predicted TFLOPS | AITER TFLOPS (published) |")
    print("|--:|--:|--:|---|--:|--:|--:|--:|")
    for (m, n, k), aiter in AITER:
        us, tile, splits = best(tiles["gfx942"], m, n, k, dev)
        tf = 2 * m * n * k / (us * 1e-6) / 1e12
        print(f"| {m} | {n} | {k} | {tile[0]}x{tile[1]}x{tile[2]} i{tile[4]} | {splits} | {us:.1f} | {tf:.0f} | {aiter} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] == "--table":
        table(sys.argv[1])
    elif len(sys.argv) == 3:
        write_configs(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
