"""The same ops on numpy arrays, on the CPU backend (for machines without torch). numpy has no
fp8 dtype: fp8 arrays are uint8 bit patterns of the flavour named by `fp8_format` ("e4m3fn"
or "e4m3fnuz"); bf16 outputs are uint16 bit patterns (`output_dtype="bfloat16"`)."""

import numpy as np

from . import _lib, errors

_FMT = {"e4m3fn": _lib.FP8_E4M3FN, "e4m3fnuz": _lib.FP8_E4M3FNUZ}
_IN = {np.dtype(np.float32): _lib.DTYPE_F32, np.dtype(np.float16): _lib.DTYPE_F16}


def _ctx():
    return _lib.context(_lib.BACKEND_CPU, 0)


def _fmt(fp8_format):
    code = _FMT.get(fp8_format)
    if code is None:
        raise errors.InvalidArgumentError(f"fp8_format must be 'e4m3fn' or 'e4m3fnuz', got {fp8_format!r}")
    return code


def _array(x, name, dtype):
    if not isinstance(x, np.ndarray):
        raise errors.DtypeError(f"{name} must be a numpy array (or a torch tensor with torch installed), got {type(x).__name__}")
    if x.dtype != dtype:
        raise errors.DtypeError(f"{name} must be {np.dtype(dtype)} (fp8 as uint8 bit patterns), got {x.dtype}")
    return np.ascontiguousarray(x)


def _ptr(a):
    return a.ctypes.data


def w8a8_block_fp8_matmul(A, B, As, Bs, block_size, output_dtype=np.float16, fp8_format="e4m3fn"):
    """C [..., N] = (A [..., K] * As) @ (B [N, K] * Bs)^T on the CPU. As may be any strided view
    (it is made contiguous: a copy of M*G floats where it is not). output_dtype: np.float16,
    np.float32 or "bfloat16" (returned as uint16 bit patterns)."""
    op = "w8a8_block_fp8_matmul"
    fmt = _fmt(fp8_format)
    if len(block_size) != 2 or min(block_size) <= 0:
        raise errors.InvalidArgumentError(f"{op}: block_size must be [block_n, block_k] of positive ints, got {list(block_size)}")
    bn, bk = (int(b) for b in block_size)
    out_code, out_np = {"bfloat16": (_lib.DTYPE_BF16, np.uint16), np.dtype(np.float16): (_lib.DTYPE_F16, np.float16), np.dtype(np.float32): (_lib.DTYPE_F32, np.float32)}.get(
        output_dtype if isinstance(output_dtype, str) else np.dtype(output_dtype), (None, None)
    )
    if out_code is None:
        raise errors.DtypeError(f"{op}: output_dtype must be np.float16, np.float32 or 'bfloat16', got {output_dtype!r}")
    A, B = _array(A, "A", np.uint8), _array(B, "B", np.uint8)
    As, Bs = _array(As, "As", np.float32), _array(Bs, "Bs", np.float32)
    if A.ndim < 1 or B.ndim != 2 or Bs.ndim != 2:
        raise errors.ShapeError(f"{op}: A must be [..., K], B [N, K] and Bs 2-D; got A {A.shape}, B {B.shape}, Bs {Bs.shape}")
    K, N = A.shape[-1], B.shape[0]
    if B.shape[1] != K:
        raise errors.ShapeError(f"{op}: A is {A.shape} and B is {B.shape}: K differs")
    G = -(-K // bk)
    if Bs.shape != (-(-N // bn), G):
        raise errors.ShapeError(f"{op}: Bs must be [ceil(N/{bn}), ceil(K/{bk})] = {[-(-N // bn), G]}, got {list(Bs.shape)}")
    if As.shape != A.shape[:-1] + (G,):
        raise errors.ShapeError(f"{op}: As must be A.shape[:-1] + [ceil(K/{bk})] = {list(A.shape[:-1]) + [G]}, got {list(As.shape)}")
    M = A.size // K if K else 0
    out = np.empty(A.shape[:-1] + (N,), dtype=out_np)
    if M == 0 or N == 0:
        return out
    ctx = _ctx()
    w = _lib.make_weight("borrow", ctx, 0, _ptr(B), _ptr(Bs), N, K, (bn, bk), fmt, keep=(B, Bs))
    try:
        _lib.check(_lib.lib.blockfp8_gemm(ctx.handle, 0, _ptr(A), _ptr(As), _lib.LAYOUT_ROW_MAJOR, w.handle, _ptr(out), out_code, M, N, K))
    finally:
        w.close()
    return out


def per_token_group_quant_fp8(x, group_size, eps=1e-10, dtype=None, column_major_scales=False, use_ue8m0=False):
    """(x_q uint8 bit patterns, x_s float32) as vLLM's op; dtype: None / "e4m3fn" / "e4m3fnuz".
    Column-major x_s is an [M, G] view of padded [G, round_up(M, 4)] storage."""
    op = "per_token_group_quant_fp8"
    fmt = _fmt("e4m3fn" if dtype is None else dtype)
    if not isinstance(x, np.ndarray) or np.dtype(x.dtype) not in _IN:
        raise errors.DtypeError(f"{op}: x must be a float32 or float16 numpy array, got {getattr(x, 'dtype', type(x).__name__)}")
    if eps != 1e-10:
        raise errors.InvalidArgumentError(f"{op}: eps={eps!r} is not supported: the blockfp8 quantizers use a fixed eps of 1e-10 (vLLM's default)")
    if group_size <= 0:
        raise errors.InvalidArgumentError(f"{op}: group_size must be >= 1, got {group_size}")
    if x.ndim < 1 or (column_major_scales and x.ndim != 2):
        raise errors.ShapeError(f"{op}: x must be [..., K] ([M, K] with column_major_scales), got {x.shape}")
    x = np.ascontiguousarray(x)
    K = x.shape[-1]
    M = x.size // K if K else 0
    G = -(-K // group_size)
    q = np.empty(x.shape, dtype=np.uint8)
    pm = (M + 3) // 4 * 4
    if column_major_scales:
        storage = np.empty((G, pm), dtype=np.float32)
        s = storage.T[:M]
    else:
        storage = s = np.empty(x.shape[:-1] + (G,), dtype=np.float32)
    if M == 0 or K == 0:
        return q, s
    layout = _lib.LAYOUT_COLUMN_MAJOR if column_major_scales else _lib.LAYOUT_ROW_MAJOR
    _lib.check(
        _lib.lib.blockfp8_quantize_tokens(
            _ctx().handle, 0, _ptr(x), _IN[np.dtype(x.dtype)], M, K, group_size, fmt, _lib.FP8_FINITE_MAX[fmt], layout, int(use_ue8m0), _ptr(q), _ptr(storage), storage.size
        )
    )
    return q, s


def quantize_weight(w, block_size=(128, 128), dtype=None):
    """(q uint8 [N, K], s float32 [ceil(N/128), ceil(K/128)]) of a float32/float16 weight."""
    if tuple(block_size) != (128, 128):
        raise errors.InvalidArgumentError(f"quantize_weight: only 128x128 blocks are supported, got {tuple(block_size)}")
    fmt = _fmt("e4m3fn" if dtype is None else dtype)
    if not isinstance(w, np.ndarray) or np.dtype(w.dtype) not in _IN or w.ndim != 2:
        raise errors.DtypeError(f"quantize_weight: w must be a 2-D float32 or float16 numpy array, got {getattr(w, 'dtype', type(w).__name__)} {getattr(w, 'shape', '')}")
    w = np.ascontiguousarray(w)
    n, k = w.shape
    q = np.empty((n, k), dtype=np.uint8)
    s = np.empty((-(-n // 128), -(-k // 128)), dtype=np.float32)
    if n and k:
        _lib.check(_lib.lib.blockfp8_quantize_weight(_ctx().handle, 0, _ptr(w), _IN[np.dtype(w.dtype)], n, k, fmt, _ptr(q), _ptr(s)))
    return q, s


def normalize_e4m3fn_to_e4m3fnuz(weight, weight_scale, input_scale=None):
    """e4m3fn bit patterns and scales -> e4m3fnuz with the same values (new arrays):
    (weight with 0x80 -> 0x00, weight_scale * 2, input_scale * 2)."""
    q = np.array(_array(weight, "weight", np.uint8), copy=True)
    s = np.array(_array(weight_scale, "weight_scale", np.float32), copy=True)
    _lib.check(_lib.lib.blockfp8_convert_e4m3fn_to_fnuz_host(_ptr(q), q.size, _ptr(s), s.size))
    return q, s, None if input_scale is None else np.asarray(input_scale, dtype=np.float32) * 2
