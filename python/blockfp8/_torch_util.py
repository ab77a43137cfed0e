"""Torch tensors to the native library's terms: device -> context, current stream, dtype codes."""

import torch

from . import _lib, errors

FP8_CODES = {torch.float8_e4m3fn: _lib.FP8_E4M3FN, torch.float8_e4m3fnuz: _lib.FP8_E4M3FNUZ}
FP8_DTYPES = {v: k for k, v in FP8_CODES.items()}
FLOAT_CODES = {torch.bfloat16: _lib.DTYPE_BF16, torch.float16: _lib.DTYPE_F16, torch.float32: _lib.DTYPE_F32}


def context_for(device):
    """The native context of a torch device: CPU, or GPU `cuda:i` (CUDA, or HIP under ROCm torch)."""
    if device.type == "cpu":
        return _lib.context(_lib.BACKEND_CPU, 0)
    if device.type == "cuda":
        backend = _lib.BACKEND_ROCM if getattr(torch.version, "hip", None) else _lib.BACKEND_CUDA
        index = device.index if device.index is not None else torch.cuda.current_device()
        return _lib.context(backend, index)
    raise errors.DeviceError(f"blockfp8 runs on cpu and cuda (CUDA or ROCm) tensors, not {device.type}")


def stream_for(device):
    """torch's current stream on `device` as the raw CUstream/hipStream_t (0 on the CPU)."""
    if device.type == "cpu":
        return 0
    return torch.cuda.current_stream(device).cuda_stream


def fp8_code(dtype, what):
    code = FP8_CODES.get(dtype)
    if code is None:
        raise errors.DtypeError(f"{what} must be torch.float8_e4m3fn or torch.float8_e4m3fnuz, got {dtype}")
    return code


def float_code(dtype, what):
    code = FLOAT_CODES.get(dtype)
    if code is None:
        raise errors.DtypeError(f"{what} must be torch.bfloat16, torch.float16 or torch.float32, got {dtype}")
    return code


def device_fp8_dtype(device):
    """The fp8 dtype the device computes in: float8_e4m3fnuz on gfx942, float8_e4m3fn elsewhere."""
    return FP8_DTYPES[context_for(device).fp8_format]


def check_same_device(op, **tensors):
    devices = {name: t.device for name, t in tensors.items()}
    first = next(iter(devices.values()))
    if any(d != first for d in devices.values()):
        raise errors.DeviceError(f"{op}: tensors on different devices: " + ", ".join(f"{n} on {d}" for n, d in devices.items()))


def aligned(t, align):
    return t.data_ptr() % align == 0
