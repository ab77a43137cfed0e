"""The torch custom ops (namespace `blockfp8`), with fake implementations for torch.compile.
The public functions run an op's implementation directly on plain eager tensors, skipping the
dispatcher's host cost, and the op itself otherwise (`_plain_eager`).

Every op runs on torch's current stream of the inputs' device, allocates its outputs with torch,
and never waits for the device. Argument checks (shape, dtype, device, layout) run in the fake
implementation too, so a bad call fails at trace time with the same message.

Layouts the GEMM takes without a copy: A contiguous [..., K]; As row-major [..., ceil(K/bk)]
(contiguous), or column-major [M, G] with strides (1, round_up(M, 4)) over storage of at least
G * round_up(M, 4) floats (what `per_token_group_quant_fp8(column_major_scales=True)` returns,
and vLLM's own column-major scales whenever M % 4 == 0). Other As layouts (vLLM's
column-major scales with M % 4 != 0, or any strided view) are copied on the stream into the
padded column-major layout (one [G, round_up(M, 4)] float allocation and one copy kernel, a few
KB at decode sizes) or, when not column-major at all, into a contiguous row-major copy. A or As
not 16-byte aligned on a GPU are copied too.
"""

from typing import Optional

import torch
from torch import Tensor
from torch.overrides import has_torch_function
from torch.utils._python_dispatch import _get_current_dispatch_mode

from . import _lib, errors, weight_cache
from ._torch_util import FP8_DTYPES, aligned, check_same_device, context_for, float_code, fp8_code, stream_for

SCALE_EPS = 1e-10  # the native quantizers' fixed eps (src/quant.rs SCALE_EPS)


def _round4(m):
    return (m + 3) // 4 * 4


def _check_gemm(A, B, As, Bs, block_size, output_dtype):
    """(M, N, K, G) after checking everything that needs no data."""
    op = "w8a8_block_fp8_matmul"
    if len(block_size) != 2 or min(block_size) <= 0:
        raise errors.InvalidArgumentError(f"{op}: block_size must be [block_n, block_k] of positive ints, got {list(block_size)}")
    bn, bk = block_size
    fp8_code(A.dtype, f"{op}: A")
    fp8_code(B.dtype, f"{op}: B")
    float_code(output_dtype, f"{op}: output_dtype")
    for name, t in (("As", As), ("Bs", Bs)):
        if t.dtype != torch.float32:
            raise errors.DtypeError(f"{op}: {name} must be torch.float32, got {t.dtype}")
    check_same_device(op, A=A, B=B, As=As, Bs=Bs)
    if A.dim() < 1 or B.dim() != 2 or Bs.dim() != 2:
        raise errors.ShapeError(f"{op}: A must be [..., K], B [N, K] and Bs 2-D; got A {tuple(A.shape)}, B {tuple(B.shape)}, Bs {tuple(Bs.shape)}")
    K = A.shape[-1]
    N = B.shape[0]
    if B.shape[1] != K:
        raise errors.ShapeError(f"{op}: A is {tuple(A.shape)} and B is {tuple(B.shape)}: K differs")
    G = -(-K // bk)
    want_bs = (-(-N // bn), G)
    if tuple(Bs.shape) != want_bs:
        raise errors.ShapeError(f"{op}: Bs must be [ceil(N/{bn}), ceil(K/{bk})] = {list(want_bs)}, got {list(Bs.shape)}")
    if tuple(As.shape) != tuple(A.shape[:-1]) + (G,):
        raise errors.ShapeError(f"{op}: As must be A.shape[:-1] + [ceil(K/{bk})] = {list(A.shape[:-1]) + [G]}, got {list(As.shape)}")
    if not A.is_contiguous():
        raise errors.LayoutError(f"{op}: A must be contiguous, got strides {tuple(A.stride())}")
    if not B.is_contiguous():
        raise errors.LayoutError(f"{op}: B must be contiguous (row-major [N, K]), got strides {tuple(B.stride())}")
    M = A.numel() // K if K else 0
    return M, N, K, G


def _scales_arg(As, M, G, align):
    """(pointer, layout, tensor to keep alive) for the activation scales; see the module doc."""
    pm = _round4(M)
    s2 = As.reshape(M, G) if As.dim() != 2 else As
    if s2.is_contiguous() and aligned(s2, align):
        return s2.data_ptr(), _lib.LAYOUT_ROW_MAJOR, s2
    if s2.dim() == 2 and s2.stride(0) == 1:
        fits = s2.untyped_storage().nbytes() >= (s2.storage_offset() + G * pm) * 4
        if (G == 1 or s2.stride(1) == pm) and fits and aligned(s2, align):
            return s2.data_ptr(), _lib.LAYOUT_COLUMN_MAJOR, s2
        padded = s2.new_zeros((G, pm))
        padded[:, :M].copy_(s2.t())
        return padded.data_ptr(), _lib.LAYOUT_COLUMN_MAJOR, padded
    row = s2.contiguous()
    if not aligned(row, align):
        row = row.clone()
    return row.data_ptr(), _lib.LAYOUT_ROW_MAJOR, row


def _gemm(A, B, As, Bs, block_size, output_dtype):
    """The GEMM on real tensors: the op's implementation, and the eager path's (`_plain_eager`)."""
    M, N, K, G = _check_gemm(A, B, As, Bs, block_size, output_dtype)
    out = torch.empty(tuple(A.shape[:-1]) + (N,), dtype=output_dtype, device=A.device)
    if M == 0 or N == 0:
        return out
    ctx = context_for(A.device)
    if A.dtype != B.dtype and not (ctx.fp8_format == _lib.FP8_E4M3FNUZ and A.dtype == torch.float8_e4m3fnuz and B.dtype == torch.float8_e4m3fn):
        raise errors.DtypeError(f"w8a8_block_fp8_matmul: A is {A.dtype} but B is {B.dtype}; convert B with blockfp8.normalize_e4m3fn_to_e4m3fnuz")
    if ctx.backend != _lib.BACKEND_CPU and A.dtype != FP8_DTYPES[ctx.fp8_format]:
        raise errors.DtypeError(f"w8a8_block_fp8_matmul: {ctx.name} computes in {FP8_DTYPES[ctx.fp8_format]}, A is {A.dtype}")
    weight = weight_cache.lookup(B, Bs, list(block_size))
    a2 = A.reshape(M, K)
    if not aligned(a2, ctx.alignment):
        a2 = a2.clone()
    s_ptr, layout, _keep = _scales_arg(As, M, G, ctx.alignment)
    stream = stream_for(A.device)
    _lib.check(_lib.lib.blockfp8_gemm(ctx.handle, stream, a2.data_ptr(), s_ptr, layout, weight.native.handle, out.data_ptr(), float_code(output_dtype, "output_dtype"), M, N, K))
    return out


@torch.library.custom_op("blockfp8::w8a8_block_fp8_matmul", mutates_args=())
def w8a8_block_fp8_matmul_op(A: Tensor, B: Tensor, As: Tensor, Bs: Tensor, block_size: list[int], output_dtype: torch.dtype) -> Tensor:
    return _gemm(A, B, As, Bs, block_size, output_dtype)


@w8a8_block_fp8_matmul_op.register_fake
def _(A, B, As, Bs, block_size, output_dtype):
    _M, N, _K, _G = _check_gemm(A, B, As, Bs, block_size, output_dtype)
    return A.new_empty(tuple(A.shape[:-1]) + (N,), dtype=output_dtype)


def _check_quant(x, group_size, eps, dtype, column_major_scales):
    op = "per_token_group_quant_fp8"
    float_code(x.dtype, f"{op}: x")
    if group_size <= 0:
        raise errors.InvalidArgumentError(f"{op}: group_size must be >= 1, got {group_size}")
    if eps != SCALE_EPS:
        raise errors.InvalidArgumentError(f"{op}: eps={eps!r} is not supported: the blockfp8 quantizers use a fixed eps of 1e-10 (vLLM's default)")
    if dtype is not None:
        fp8_code(dtype, f"{op}: dtype")
    if x.dim() < 1:
        raise errors.ShapeError(f"{op}: x must be [..., K], got a 0-d tensor")
    if column_major_scales and x.dim() != 2:
        raise errors.ShapeError(f"{op}: column_major_scales needs a 2-D x [M, K], got {tuple(x.shape)}")
    K = x.shape[-1]
    M = x.numel() // K if K else 0
    return M, K, -(-K // group_size)


def _quant_outputs(x, M, G, dtype, column_major_scales):
    q = torch.empty(x.shape, dtype=dtype, device=x.device)
    if column_major_scales:
        # [M, G] view of padded [G, round_up(M, 4)] storage: the crate's column-major layout.
        s = torch.empty((G, _round4(M)), dtype=torch.float32, device=x.device).t()[:M]
    else:
        s = torch.empty(tuple(x.shape[:-1]) + (G,), dtype=torch.float32, device=x.device)
    return q, s


def _resolve_fp8(x, dtype):
    return dtype if dtype is not None else FP8_DTYPES[context_for(x.device).fp8_format]


def _quant(x, group_size, eps, dtype, column_major_scales, use_ue8m0):
    """The activation quantization on real tensors: the op's implementation, and the eager path's."""
    M, K, G = _check_quant(x, group_size, eps, dtype, column_major_scales)
    dtype = _resolve_fp8(x, dtype)
    q, s = _quant_outputs(x, M, G, dtype, column_major_scales)
    if M == 0 or K == 0:
        return q, s
    ctx = context_for(x.device)
    xc = x.contiguous()  # a copy only where x is strided
    if not aligned(xc, ctx.alignment):
        xc = xc.clone()
    fmt = fp8_code(dtype, "dtype")
    layout = _lib.LAYOUT_COLUMN_MAJOR if column_major_scales else _lib.LAYOUT_ROW_MAJOR
    s_len = (_round4(M) if column_major_scales else M) * G
    _lib.check(
        _lib.lib.blockfp8_quantize_tokens(
            ctx.handle, stream_for(x.device), xc.data_ptr(), float_code(x.dtype, "x"), M, K, group_size, fmt,
            _lib.FP8_FINITE_MAX[fmt], layout, int(use_ue8m0), q.data_ptr(), s.data_ptr(), s_len,
        )
    )
    return q, s


@torch.library.custom_op("blockfp8::per_token_group_quant_fp8", mutates_args=())
def per_token_group_quant_fp8_op(x: Tensor, group_size: int, eps: float, dtype: Optional[torch.dtype], column_major_scales: bool, use_ue8m0: bool) -> tuple[Tensor, Tensor]:
    return _quant(x, group_size, eps, dtype, column_major_scales, use_ue8m0)


@per_token_group_quant_fp8_op.register_fake
def _(x, group_size, eps, dtype, column_major_scales, use_ue8m0):
    M, _K, G = _check_quant(x, group_size, eps, dtype, column_major_scales)
    dtype = _resolve_fp8(x, dtype)
    q = x.new_empty(x.shape, dtype=dtype)
    if column_major_scales:
        s = torch.empty_strided((M, G), (1, _round4(M)), dtype=torch.float32, device=x.device)
    else:
        s = x.new_empty(tuple(x.shape[:-1]) + (G,), dtype=torch.float32)
    return q, s


def _check_weight_quant(w, dtype):
    float_code(w.dtype, "quantize_weight: w")
    if dtype is not None:
        fp8_code(dtype, "quantize_weight: dtype")
    if w.dim() != 2:
        raise errors.ShapeError(f"quantize_weight: w must be [N, K], got {tuple(w.shape)}")
    n, k = w.shape
    return n, k, -(-n // 128), -(-k // 128)


@torch.library.custom_op("blockfp8::quantize_weight", mutates_args=())
def quantize_weight_op(w: Tensor, dtype: Optional[torch.dtype]) -> tuple[Tensor, Tensor]:
    n, k, nb, kb = _check_weight_quant(w, dtype)
    dtype = _resolve_fp8(w, dtype)
    q = torch.empty((n, k), dtype=dtype, device=w.device)
    s = torch.empty((nb, kb), dtype=torch.float32, device=w.device)
    if n == 0 or k == 0:
        return q, s
    ctx = context_for(w.device)
    wc = w.contiguous()
    if not aligned(wc, ctx.alignment):
        wc = wc.clone()
    _lib.check(_lib.lib.blockfp8_quantize_weight(ctx.handle, stream_for(w.device), wc.data_ptr(), float_code(w.dtype, "w"), n, k, fp8_code(dtype, "dtype"), q.data_ptr(), s.data_ptr()))
    return q, s


@quantize_weight_op.register_fake
def _(w, dtype):
    n, k, nb, kb = _check_weight_quant(w, dtype)
    dtype = _resolve_fp8(w, dtype)
    return w.new_empty((n, k), dtype=dtype), w.new_empty((nb, kb), dtype=torch.float32)


# ---- The public torch functions (thin, traceable wrappers over the ops) ---------------------

# The overloads themselves: calling them skips the overload-packet lookup on every eager call.
_GEMM = torch.ops.blockfp8.w8a8_block_fp8_matmul.default
_QUANT = torch.ops.blockfp8.per_token_group_quant_fp8.default
_PYTHON_KEY = torch._C.DispatchKey.Python


def _plain_eager(*tensors):
    """Whether a call may run the op's implementation directly instead of through torch's
    dispatcher, which costs about 17 us of host time per call from Python (this CPU machine,
    torch 2.15: 40 us a call through the op at M=1 against 23 us direct), while an eager GEMM
    of M = 1024, N = 4096, K = 7168 runs 44 us on the H200. Only for real tensors outside any
    tracing: under torch.compile, a dispatch or torch-function mode (FakeTensorMode, make_fx,
    FlopCounterMode, ...), with tensor subclasses that intercept ops (fake, functional, DTensor)
    or inputs that need autograd, the call goes through the op, so those see it as before."""
    if torch.compiler.is_compiling() or _get_current_dispatch_mode() is not None or torch._C._is_torch_function_mode_enabled():
        return False
    for t in tensors:
        if type(t) is torch.Tensor:
            continue
        # (Not a tensor: the op's own argument check says so. Subclasses such as nn.Parameter
        # pass unless they intercept ops.)
        if not isinstance(t, torch.Tensor) or has_torch_function((t,)) or torch._C._dispatch_keys(t).has(_PYTHON_KEY):
            return False
    return not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))


def w8a8_block_fp8_matmul(A, B, As, Bs, block_size, output_dtype=torch.float16):
    """vLLM's `w8a8_triton_block_scaled_mm(A, B, As, Bs, block_size, output_dtype)`: C [..., N] =
    (A [..., K] fp8 * As) @ (B [N, K] fp8 * Bs)^T. See the module doc for the As layouts taken."""
    block = [int(b) for b in block_size]
    if _plain_eager(A, B, As, Bs):
        return _gemm(A, B, As, Bs, block, output_dtype)
    return _GEMM(A, B, As, Bs, block, output_dtype)


def per_token_group_quant_fp8(x, group_size, eps=1e-10, dtype=None, column_major_scales=False, use_ue8m0=False):
    """vLLM's `per_token_group_quant_fp8`: (x_q, x_s) with x_s = max(|x| over each group, eps) /
    finfo(dtype).max (rounded up to a power of two with use_ue8m0). dtype None = the device's
    fp8 dtype. K need not be a multiple of group_size (the last group is partial; GPUs take
    group_size 128 only). Column-major x_s is an [M, G] view with strides (1, round_up(M, 4))."""
    args = (int(group_size), float(eps), dtype, bool(column_major_scales), bool(use_ue8m0))
    if _plain_eager(x):
        return _quant(x, *args)
    return _QUANT(x, *args)


def quantize_weight(w, block_size=(128, 128), dtype=None):
    """Block quantization of a bf16/f16/f32 weight [N, K]: (q fp8 [N, K], s f32 [ceil(N/128),
    ceil(K/128)]), s = max(block amax, 1e-10) / finfo(dtype).max. 128x128 blocks only."""
    if tuple(block_size) != (128, 128):
        raise errors.InvalidArgumentError(f"quantize_weight: only 128x128 blocks are supported, got {tuple(block_size)}")
    return torch.ops.blockfp8.quantize_weight(w, dtype)


def normalize_e4m3fn_to_e4m3fnuz(weight, weight_scale, input_scale=None):
    """vLLM's conversion of an OCP e4m3fn checkpoint for gfx942, without modifying its inputs:
    (weight as e4m3fnuz with byte 0x80 -> 0x00, weight_scale * 2, input_scale * 2). The values
    weight * weight_scale are unchanged. Any device; no host synchronization."""
    if weight.dtype != torch.float8_e4m3fn:
        raise errors.DtypeError(f"normalize_e4m3fn_to_e4m3fnuz: weight must be torch.float8_e4m3fn, got {weight.dtype}")
    as_int8 = weight.view(torch.int8)
    fixed = torch.where(as_int8 == -128, torch.zeros_like(as_int8), as_int8)
    return fixed.view(torch.float8_e4m3fnuz), weight_scale * 2.0, None if input_scale is None else input_scale * 2.0


def prepare_weight(B, Bs, block_size=(128, 128)):
    """Prepares (B, Bs) for the GEMM now and pins it in the weight cache: what an engine calls at
    load time. Returns a `PreparedWeight` (`.matmul(A, As, output_dtype)`, `.reserve(max_m)`,
    `.release()`)."""
    _check_gemm(B[:0], B, Bs.new_empty((0, Bs.shape[-1])) if Bs.dim() == 2 else Bs, Bs, list(block_size), torch.float16)
    return weight_cache.lookup(B, Bs, [int(b) for b in block_size], pin=True)
