"""blockfp8: block-scaled W8A8 FP8 GEMM and quantization (DeepSeek-V3 style: 1x128 activation
scales, 128x128 weight scales) for PyTorch on CUDA, ROCm and the CPU, with vLLM's argument order
and semantics, so a vLLM user can swap them in:

    from blockfp8 import w8a8_block_fp8_matmul, per_token_group_quant_fp8
    x_q, x_s = per_token_group_quant_fp8(x, 128)
    y = w8a8_block_fp8_matmul(x_q, weight, x_s, weight_scale_inv, [128, 128], torch.bfloat16)

The ops are torch custom ops (`torch.ops.blockfp8.*`, with fake implementations), so they work
under torch.compile(fullgraph=True) and CUDA/HIP graph capture; they run on torch's current
stream, allocate outputs with torch and never synchronize the host. Eager calls on plain tensors
run the ops' implementations without torch's dispatcher (a third less host time per GEMM); under
tracing, modes or tensor subclasses they go through the ops. CPU tensors run on the CPU
backend. Without torch, the same functions take numpy arrays (CPU; fp8 as uint8 bit patterns,
see `blockfp8.numpy_ops`).

Weights: the GEMM prepares each (B, Bs) pair once and caches it (see `blockfp8.weight_cache`);
engines can do that explicitly with `prepare_weight`. Tuned configs: the native library reads
$BLOCKFP8_CONFIG_DIR when a device is first used, then its shipped configs, exactly as the crate.
"""

from . import _lib, errors
from .errors import (
    Blockfp8Error,
    DeviceError,
    DtypeError,
    InternalError,
    InvalidArgumentError,
    LayoutError,
    NonFiniteError,
    ShapeError,
    UnsupportedError,
)

__version__ = "0.1.0"

try:
    import torch as _torch
except ImportError:  # the numpy path still works
    _torch = None

if _torch is not None:
    from . import torch_ops as _torch_ops
    from . import weight_cache
    from .weight_cache import PreparedWeight
else:
    _torch_ops = None


def _numpy_ops():
    try:
        from . import numpy_ops
    except ImportError:
        raise ImportError("blockfp8: neither torch nor numpy is installed; install one of them to call the ops") from None
    return numpy_ops


def _is_tensor(x):
    return _torch is not None and isinstance(x, _torch.Tensor)


def w8a8_block_fp8_matmul(A, B, As, Bs, block_size, output_dtype=None):
    """C [..., N] = (A [..., K] fp8, As [..., ceil(K/bk)]) x (B [N, K] fp8, Bs [ceil(N/bn),
    ceil(K/bk)])^T in output_dtype (default float16, as vLLM). As row-major, or column-major
    (vLLM's `column_major_scales=True` layout); see `blockfp8.torch_ops` for which layouts are
    copied. Torch tensors, or numpy arrays (CPU, fp8 as uint8, `blockfp8.numpy_ops`)."""
    if _is_tensor(A):
        return _torch_ops.w8a8_block_fp8_matmul(A, B, As, Bs, block_size, _torch.float16 if output_dtype is None else output_dtype)
    np_ops = _numpy_ops()
    return np_ops.w8a8_block_fp8_matmul(A, B, As, Bs, block_size, np_ops.np.float16 if output_dtype is None else output_dtype)


def per_token_group_quant_fp8(x, group_size, eps=1e-10, dtype=None, column_major_scales=False, use_ue8m0=False):
    """vLLM's `per_token_group_quant_fp8`: returns (x_q, x_s). Only eps=1e-10 is supported (the
    native quantizers' fixed floor); another value raises InvalidArgumentError."""
    if _is_tensor(x):
        return _torch_ops.per_token_group_quant_fp8(x, group_size, eps, dtype, column_major_scales, use_ue8m0)
    return _numpy_ops().per_token_group_quant_fp8(x, group_size, eps, dtype, column_major_scales, use_ue8m0)


def quantize_weight(w, block_size=(128, 128), dtype=None):
    """Block quantization of a weight [N, K] (bf16/f16/f32): (q fp8 [N, K], s f32
    [ceil(N/128), ceil(K/128)])."""
    if _is_tensor(w):
        return _torch_ops.quantize_weight(w, block_size, dtype)
    return _numpy_ops().quantize_weight(w, block_size, dtype)


def normalize_e4m3fn_to_e4m3fnuz(weight, weight_scale, input_scale=None):
    """vLLM's e4m3fn -> e4m3fnuz checkpoint conversion for gfx942 (returns new tensors)."""
    if _is_tensor(weight):
        return _torch_ops.normalize_e4m3fn_to_e4m3fnuz(weight, weight_scale, input_scale)
    return _numpy_ops().normalize_e4m3fn_to_e4m3fnuz(weight, weight_scale, input_scale)


def prepare_weight(B, Bs, block_size=(128, 128)):
    """Prepares a torch weight for the GEMM now and pins it in the cache (engines, at load time)."""
    if not _is_tensor(B):
        raise DtypeError("prepare_weight takes torch tensors (the numpy path prepares per call)")
    return _torch_ops.prepare_weight(B, Bs, block_size)


def device_info(device="cpu"):
    """The native context of a device: backend, fp8 flavour, name, config-file device name."""
    if _torch is not None:
        from ._torch_util import context_for

        ctx = context_for(_torch.device(device))
    elif device == "cpu":
        ctx = _lib.context(_lib.BACKEND_CPU, 0)
    else:
        raise DeviceError(f"device {device!r} needs torch")
    return {
        "backend": _lib.BACKEND_NAMES[ctx.backend],
        "ordinal": ctx.ordinal,
        "name": ctx.name,
        "arch": ctx.arch,
        "fp8": _lib.FP8_NAMES[ctx.fp8_format],
        "config_name": ctx.config_name,
        "compute_units": ctx.compute_units,
    }


def gemm_path(m, n, k, device="cpu", block_size=(128, 128), output_dtype="bf16"):
    """Which path the GEMM takes for this shape on the device ("tuned <config>", "vendor",
    "kernel default"): shows whether a tuned config file was found."""
    codes = {"bf16": _lib.DTYPE_BF16, "f16": _lib.DTYPE_F16, "f32": _lib.DTYPE_F32}
    if output_dtype not in codes:
        raise InvalidArgumentError(f"output_dtype must be 'bf16', 'f16' or 'f32', got {output_dtype!r}")
    info = device_info(device)
    ctx = _lib.context({"cpu": _lib.BACKEND_CPU, "cuda": _lib.BACKEND_CUDA, "rocm": _lib.BACKEND_ROCM}[info["backend"]], info["ordinal"])
    return ctx.gemm_path(m, n, k, tuple(block_size), None, codes[output_dtype])


def native_version():
    """The native library's version and compiled-in backends, e.g. '0.1.0 (cpu,cuda)'."""
    return _lib.version()


def build_info():
    """How the shipped native library was built (backend, source, cargo command)."""
    return _lib.build_info()


__all__ = [
    "w8a8_block_fp8_matmul",
    "per_token_group_quant_fp8",
    "quantize_weight",
    "normalize_e4m3fn_to_e4m3fnuz",
    "prepare_weight",
    "device_info",
    "gemm_path",
    "native_version",
    "build_info",
    "Blockfp8Error",
    "DeviceError",
    "DtypeError",
    "InternalError",
    "InvalidArgumentError",
    "LayoutError",
    "NonFiniteError",
    "ShapeError",
    "UnsupportedError",
]
