"""The numpy path (CPU, no torch needed): quantizers, GEMM against a float64 reference and the
crate's CLI, the fnuz conversion, and bad input."""

import numpy as np
import pytest

import blockfp8
from blockfp8 import numpy_ops
from conftest import RAGGED, bf16_bits_from_f32, calc_diff, cli_gemm, decode_table, dequant, reference_gemm, rng_data


def quantized_problem(m, n, k, seed=0, fmt="e4m3fn"):
    x = rng_data(seed, (m, k), 2.0)
    w = rng_data(seed + 1, (n, k), 0.05)
    xq, xs = numpy_ops.per_token_group_quant_fp8(x, 128, dtype=fmt)
    wq, ws = numpy_ops.quantize_weight(w, dtype=fmt)
    return x, w, xq, xs, wq, ws


@pytest.mark.parametrize("fmt,fmax", [("e4m3fn", 448.0), ("e4m3fnuz", 240.0)])
def test_token_scales_are_group_amax_over_finite_max(fmt, fmax):
    x = rng_data(3, (7, 300), 5.0)
    x[2, :128] = 0.0  # an all-zero group: scale = eps / fmax
    q, s = numpy_ops.per_token_group_quant_fp8(x, 128, dtype=fmt)
    assert q.shape == (7, 300) and q.dtype == np.uint8 and s.shape == (7, 3)
    groups = [np.abs(x[:, i : i + 128]).max(axis=1) for i in range(0, 300, 128)]
    want = np.maximum(np.stack(groups, axis=1), np.float32(1e-10)) / np.float32(fmax)
    np.testing.assert_array_equal(s, want.astype(np.float32))
    deq = dequant(q, s, (1, 128), fmt == "e4m3fnuz")
    # e4m3: 3 mantissa bits, so within 1/16 relative plus the subnormal step.
    assert np.all(np.abs(deq - x) <= np.abs(x) / 16 + np.repeat(s, 128, axis=1)[:, :300] * 2.0**-6)
    assert np.all(q[2, :128] == 0)


def test_column_major_scales_are_a_padded_view():
    x = rng_data(4, (5, 256))
    q, s = numpy_ops.per_token_group_quant_fp8(x, 128)
    q2, s2 = numpy_ops.per_token_group_quant_fp8(x, 128, column_major_scales=True)
    np.testing.assert_array_equal(q, q2)
    np.testing.assert_array_equal(s, s2)
    assert s2.shape == (5, 2) and s2.strides == (4, 8 * 4)  # [G, round_up(5, 4) = 8] storage
    assert np.all(s2.base[:, 5:] == 0)  # padding rows written 0 on the CPU


def test_ue8m0_scales_are_powers_of_two_at_least_the_plain_scale():
    x = rng_data(5, (4, 384), 3.0)
    _, s = numpy_ops.per_token_group_quant_fp8(x, 128)
    _, s8 = numpy_ops.per_token_group_quant_fp8(x, 128, use_ue8m0=True)
    mant, _ = np.frexp(s8)
    assert np.all(mant == 0.5) and np.all(s8 >= s) and np.all(s8 < 2 * s)


def test_weight_scales_are_block_amax_over_finite_max():
    w = rng_data(6, (200, 300), 0.1)
    q, s = numpy_ops.quantize_weight(w)
    assert s.shape == (2, 3)
    for bi in range(2):
        for bk in range(3):
            blk = w[bi * 128 : (bi + 1) * 128, bk * 128 : (bk + 1) * 128]
            assert s[bi, bk] == np.float32(np.abs(blk).max()) / np.float32(448.0)
    assert np.all(np.abs(dequant(q, s, (128, 128)) - w) <= np.abs(w) / 16 + 1e-6)


@pytest.mark.parametrize("m,n,k", RAGGED)
def test_gemm_matches_float64_reference_and_rounds_outputs(m, n, k):
    _, _, xq, xs, wq, ws = quantized_problem(m, n, k, seed=m + n + k)
    ref = reference_gemm(xq, xs, wq, ws)
    c32 = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], np.float32)
    assert c32.shape == (m, n) and c32.dtype == np.float32
    assert calc_diff(ref, c32) < 1e-6
    assert np.allclose(c32, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    # f16 and bf16 are the f32 result rounded to nearest even.
    np.testing.assert_array_equal(blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128]), c32.astype(np.float16))
    np.testing.assert_array_equal(blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], "bfloat16"), bf16_bits_from_f32(c32))


@pytest.mark.parametrize("m,n,k", [(3, 129, 200), (17, 576, 1280)])
@pytest.mark.parametrize("fmt", ["e4m3fn", "e4m3fnuz"])
def test_gemm_equals_the_crate_cli_bit_for_bit(tmp_path, m, n, k, fmt):
    _, _, xq, xs, wq, ws = quantized_problem(m, n, k, seed=7, fmt=fmt)
    ours = numpy_ops.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], np.float32, fp8_format=fmt)
    np.testing.assert_array_equal(ours, cli_gemm(tmp_path, xq, xs, wq, ws, fp8=fmt))


def test_batch_dimensions_are_flattened():
    _, _, xq, xs, wq, ws = quantized_problem(6, 129, 200)
    flat = numpy_ops.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], np.float32)
    batched = numpy_ops.w8a8_block_fp8_matmul(xq.reshape(2, 3, 200), wq, xs.reshape(2, 3, 2), ws, [128, 128], np.float32)
    assert batched.shape == (2, 3, 129)
    np.testing.assert_array_equal(batched.reshape(6, 129), flat)


def test_strided_scales_are_copied_not_misread():
    _, _, xq, xs, wq, ws = quantized_problem(5, 129, 300)
    want = numpy_ops.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], np.float32)
    col = np.asfortranarray(xs)  # the same values, column-major
    np.testing.assert_array_equal(numpy_ops.w8a8_block_fp8_matmul(xq, wq, col, ws, [128, 128], np.float32), want)


def test_empty_batch_gives_an_empty_result():
    _, _, _, _, wq, ws = quantized_problem(1, 129, 200)
    out = numpy_ops.w8a8_block_fp8_matmul(np.zeros((0, 200), np.uint8), wq, np.zeros((0, 2), np.float32), ws, [128, 128])
    assert out.shape == (0, 129)


def test_fnuz_conversion_keeps_values_and_does_not_touch_inputs():
    q = np.arange(256, dtype=np.uint8).reshape(2, 128)
    s = np.array([[0.5], [3e-3]], dtype=np.float32)
    q2, s2, in2 = blockfp8.normalize_e4m3fn_to_e4m3fnuz(q, s, np.float32(0.25))
    ok = np.ones(256, bool)
    ok[[0x7F, 0xFF]] = False  # e4m3fn NaN bytes (not in checkpoints)
    before = decode_table(False)[q] * s
    after = decode_table(True)[q2] * s2
    np.testing.assert_array_equal(before.ravel()[ok], after.ravel()[ok])
    assert q2.ravel()[0x80] == 0 and q.ravel()[0x80] == 0x80 and in2 == 0.5
    np.testing.assert_array_equal(s, np.array([[0.5], [3e-3]], np.float32))


def test_bad_input_raises_clear_errors():
    _, _, xq, xs, wq, ws = quantized_problem(3, 129, 200)
    with pytest.raises(blockfp8.ShapeError, match="K differs"):
        numpy_ops.w8a8_block_fp8_matmul(xq[:, :199], wq, xs, ws, [128, 128])
    with pytest.raises(blockfp8.ShapeError, match=r"As must be"):
        numpy_ops.w8a8_block_fp8_matmul(xq, wq, xs[:, :1], ws, [128, 128])
    with pytest.raises(blockfp8.ShapeError, match=r"Bs must be"):
        numpy_ops.w8a8_block_fp8_matmul(xq, wq, xs, ws[:, :1], [128, 128])
    with pytest.raises(blockfp8.DtypeError, match="uint8"):
        numpy_ops.w8a8_block_fp8_matmul(xq.astype(np.int16), wq, xs, ws, [128, 128])
    with pytest.raises(blockfp8.DtypeError, match="output_dtype"):
        numpy_ops.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], np.int32)
    with pytest.raises(blockfp8.InvalidArgumentError, match="eps"):
        numpy_ops.per_token_group_quant_fp8(np.ones((2, 128), np.float32), 128, eps=1e-6)
    with pytest.raises(blockfp8.InvalidArgumentError, match="group_size"):
        numpy_ops.per_token_group_quant_fp8(np.ones((2, 128), np.float32), 0)
    with pytest.raises(blockfp8.NonFiniteError, match="NaN"):
        x = np.ones((2, 128), np.float32)
        x[1, 5] = np.nan
        numpy_ops.per_token_group_quant_fp8(x, 128)
    with pytest.raises(blockfp8.NonFiniteError):
        blockfp8.normalize_e4m3fn_to_e4m3fnuz(np.zeros(4, np.uint8), np.array([3e38], np.float32))
