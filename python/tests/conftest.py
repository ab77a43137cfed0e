"""Shared helpers: an fp8 decoder and float64 reference written here (independent of the
library), deterministic data, and the crate's own CLI for bit-for-bit comparisons."""

import os
import shutil
import subprocess

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The ragged shapes of the device-API tests (issue 17), small enough for the CPU here.
RAGGED = [(1, 576, 1280), (3, 129, 200), (17, 2112, 200), (100, 129, 1280), (5, 200, 300)]


def decode_table(fnuz):
    """value of each fp8 byte: bias 7 (e4m3fn, NaN 0x7f/0xff) or 8 (e4m3fnuz, NaN 0x80)."""
    bias = 8 if fnuz else 7
    out = np.empty(256, dtype=np.float64)
    for b in range(256):
        e, m = (b >> 3) & 15, b & 7
        mag = (m / 8.0) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 8.0) * 2.0 ** (e - bias)
        out[b] = -mag if b & 0x80 else mag
    out[[0x80] if fnuz else [0x7F, 0xFF]] = np.nan
    return out


def dequant(q, s, block, fnuz=False):
    """float64 values of fp8 bytes q [R, C] with one scale per (block[0] x block[1]) block."""
    r, c = q.shape
    full = np.repeat(np.repeat(s.astype(np.float64), block[0], axis=0)[:r], block[1], axis=1)[:, :c]
    return decode_table(fnuz)[q] * full


def reference_gemm(aq, as_rows, bq, bs, block=(128, 128), fnuz=False):
    """float64 C = dequant(A) @ dequant(B)^T from row-major activation scales [M, G]."""
    return dequant(aq, as_rows, (1, block[1]), fnuz) @ dequant(bq, bs, block, fnuz).T


def calc_diff(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return 1 - 2 * (x * y).sum() / (x * x + y * y).sum()


def bf16_bits_from_f32(v):
    """Round-to-nearest-even f32 -> bf16 bit patterns (uint16), finite inputs."""
    u = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def rng_data(seed, shape, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def crate_cli():
    """The crate's CLI (`blockfp8 gemm`): $BLOCKFP8_CLI, target/{release,debug}/blockfp8 of this
    repository, or `blockfp8` on PATH; None if absent."""
    for p in (os.environ.get("BLOCKFP8_CLI"), os.path.join(REPO, "target", "release", "blockfp8"), os.path.join(REPO, "target", "debug", "blockfp8"), shutil.which("blockfp8")):
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def cli_gemm(tmp_path, aq, as_, bq, bs, fp8="e4m3fn", out_dtype="f32", backend="cpu", column_major=False):
    """C from the crate's own Rust path (`blockfp8 gemm` on .npy files)."""
    cli = crate_cli()
    if cli is None:
        pytest.skip("the crate's CLI is not built (cargo build, or set BLOCKFP8_CLI): no Rust-path comparison")
    paths = {n: str(tmp_path / f"{n}.npy") for n in ("a", "as", "b", "bs", "c")}
    np.save(paths["a"], aq)
    np.save(paths["as"], as_)
    np.save(paths["b"], bq)
    np.save(paths["bs"], bs)
    cmd = [cli, "gemm", "--a", paths["a"], "--as", paths["as"], "--b", paths["b"], "--bs", paths["bs"], "--out", paths["c"], "--fp8", fp8, "--out-dtype", out_dtype, "--backend", backend]
    if column_major:
        cmd.append("--as-column-major")
    subprocess.run(cmd, check=True, capture_output=True)
    return np.load(paths["c"])
