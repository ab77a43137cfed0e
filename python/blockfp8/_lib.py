"""The shipped C library (libblockfp8_capi), loaded with ctypes: signatures, status codes mapped
to Python exceptions, and one context per device. No torch or numpy here."""

import ctypes
import json
import os
import sys
import threading

from . import errors

ABI_VERSION = 1  # include/blockfp8.h BLOCKFP8_ABI_VERSION this package was written against

BACKEND_CPU, BACKEND_CUDA, BACKEND_ROCM = 0, 1, 2
BACKEND_NAMES = {BACKEND_CPU: "cpu", BACKEND_CUDA: "cuda", BACKEND_ROCM: "rocm"}
FP8_E4M3FN, FP8_E4M3FNUZ = 0, 1
FP8_NAMES = {FP8_E4M3FN: "e4m3fn", FP8_E4M3FNUZ: "e4m3fnuz"}
DTYPE_BF16, DTYPE_F16, DTYPE_F32 = 0, 1, 2
LAYOUT_ROW_MAJOR, LAYOUT_COLUMN_MAJOR = 0, 1
FP8_FINITE_MAX = {FP8_E4M3FN: 448.0, FP8_E4M3FNUZ: 240.0}

_STATUS_EXCEPTIONS = {
    1: errors.InvalidArgumentError,
    2: errors.ShapeError,
    3: errors.NonFiniteError,
    4: errors.UnsupportedError,
    5: errors.DeviceError,
    6: errors.LayoutError,
    7: errors.DeviceError,
    8: errors.DeviceError,
    9: errors.DeviceError,
    10: errors.InvalidArgumentError,
    11: errors.InternalError,
    12: errors.Blockfp8Error,
}

_HERE = os.path.dirname(os.path.abspath(__file__))
_LIB_FILE = {"darwin": "libblockfp8_capi.dylib", "win32": "blockfp8_capi.dll"}.get(sys.platform, "libblockfp8_capi.so")


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("backend", ctypes.c_int32),
        ("ordinal", ctypes.c_uint32),
        ("fp8_format", ctypes.c_int32),
        ("compute_units", ctypes.c_uint32),
        ("alignment", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("arch", ctypes.c_char_p),
        ("config_name", ctypes.c_char_p),
    ]


class WeightInfo(ctypes.Structure):
    _fields_ = [
        ("n", ctypes.c_size_t),
        ("k", ctypes.c_size_t),
        ("block_n", ctypes.c_size_t),
        ("block_k", ctypes.c_size_t),
        ("fp8_format", ctypes.c_int32),
        ("borrowed", ctypes.c_int32),
    ]


def library_path():
    """The library this process loads: $BLOCKFP8_LIB if set (development), else the one shipped
    inside the package."""
    return os.environ.get("BLOCKFP8_LIB") or os.path.join(_HERE, "_lib", _LIB_FILE)


def build_info():
    """How the shipped library was built (backend feature, source), from the installer."""
    try:
        with open(os.path.join(_HERE, "_build_info.json")) as f:
            return json.load(f)
    except OSError:
        return {"source": "unknown (no _build_info.json; not installed with setup.py?)"}


def _load():
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            f"blockfp8: the native library {path} is missing. Install the package with "
            "`pip install ./python` from the repository root (it runs cargo), or with "
            "BLOCKFP8_PREBUILT_LIB=/path/to/libblockfp8_capi.so to ship a prebuilt one."
        )
    lib = ctypes.CDLL(path)
    c = ctypes
    P, I32, U32, U64, SZ, F32 = c.c_void_p, c.c_int32, c.c_uint32, c.c_uint64, c.c_size_t, c.c_float
    sig = {
        "blockfp8_abi_version": (U32, []),
        "blockfp8_version": (c.c_char_p, []),
        "blockfp8_backend_compiled": (I32, [I32]),
        "blockfp8_last_error": (c.c_char_p, []),
        "blockfp8_status_name": (c.c_char_p, [I32]),
        "blockfp8_context_open": (I32, [I32, U32, c.POINTER(P)]),
        "blockfp8_context_destroy": (None, [P]),
        "blockfp8_context_info": (I32, [P, c.POINTER(DeviceInfo)]),
        "blockfp8_synchronize": (I32, [P, U64]),
        "blockfp8_quantize_tokens": (I32, [P, U64, P, I32, SZ, SZ, SZ, I32, F32, I32, I32, P, P, SZ]),
        "blockfp8_quantize_weight": (I32, [P, U64, P, I32, SZ, SZ, I32, P, P]),
        "blockfp8_convert_e4m3fn_to_fnuz_host": (I32, [P, SZ, P, SZ]),
        "blockfp8_weight_prepare": (I32, [P, U64, P, P, SZ, SZ, SZ, SZ, I32, c.POINTER(P)]),
        "blockfp8_weight_prepare_host": (I32, [P, U64, P, P, SZ, SZ, SZ, SZ, I32, c.POINTER(P)]),
        "blockfp8_weight_borrow": (I32, [P, U64, P, P, SZ, SZ, SZ, SZ, I32, c.POINTER(P)]),
        "blockfp8_weight_destroy": (None, [P]),
        "blockfp8_weight_get_info": (I32, [P, c.POINTER(WeightInfo)]),
        "blockfp8_gemm": (I32, [P, U64, P, P, I32, P, P, I32, SZ, SZ, SZ]),
        "blockfp8_gemm_reserve": (I32, [P, U64, P, I32, I32, SZ]),
        "blockfp8_gemm_path": (I32, [P, SZ, SZ, SZ, SZ, SZ, I32, I32, c.c_char_p, SZ, c.POINTER(SZ)]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    got = lib.blockfp8_abi_version()
    if got != ABI_VERSION:
        raise ImportError(f"blockfp8: {path} implements C ABI version {got}, this package needs {ABI_VERSION}; reinstall the package")
    return lib


lib = _load()


def check(status):
    """Raises the exception for a non-zero status with the library's message."""
    if status != 0:
        msg = (lib.blockfp8_last_error() or b"").decode("utf-8", "replace")
        name = (lib.blockfp8_status_name(status) or b"").decode()
        raise _STATUS_EXCEPTIONS.get(status, errors.Blockfp8Error)(f"{msg} [{name}]", status)


def version():
    """The native library's version and compiled-in backends, e.g. '0.1.0 (cpu,cuda)'."""
    return lib.blockfp8_version().decode()


def backend_compiled(backend):
    return bool(lib.blockfp8_backend_compiled(backend))


class Context:
    """One device of the native library (its plan cache lives on the Rust side). Contexts are
    cached for the life of the process and never destroyed (no teardown-order hazards at exit)."""

    def __init__(self, backend, ordinal):
        handle = ctypes.c_void_p()
        check(lib.blockfp8_context_open(backend, ordinal, ctypes.byref(handle)))
        self.handle = handle
        info = DeviceInfo()
        check(lib.blockfp8_context_info(handle, ctypes.byref(info)))
        self.backend = info.backend
        self.ordinal = info.ordinal
        self.fp8_format = info.fp8_format
        self.alignment = info.alignment
        self.compute_units = info.compute_units
        self.name = info.name.decode()
        self.arch = info.arch.decode()
        self.config_name = info.config_name.decode()

    def __repr__(self):
        return f"blockfp8.Context({BACKEND_NAMES[self.backend]}:{self.ordinal} {self.name!r}, {FP8_NAMES[self.fp8_format]})"

    def gemm_path(self, m, n, k, block=(128, 128), fp8_format=None, out_dtype=DTYPE_BF16):
        fmt = self.fp8_format if fp8_format is None else fp8_format
        buf = ctypes.create_string_buffer(256)
        check(lib.blockfp8_gemm_path(self.handle, m, n, k, block[0], block[1], fmt, out_dtype, buf, len(buf), None))
        return buf.value.decode()


_contexts = {}
_contexts_lock = threading.Lock()


def context(backend, ordinal=0):
    """The process-wide context of a device, opened on first use (which reads
    BLOCKFP8_CONFIG_DIR at that moment)."""
    key = (backend, ordinal)
    ctx = _contexts.get(key)
    if ctx is None:
        with _contexts_lock:
            ctx = _contexts.get(key)
            if ctx is None:
                if not backend_compiled(backend):
                    raise errors.DeviceError(
                        f"this blockfp8 library ({version()}) was built without the {BACKEND_NAMES.get(backend, backend)} backend; "
                        "reinstall with BLOCKFP8_BACKEND=cuda or =rocm on a machine with nvcc / ROCm"
                    )
                ctx = _contexts[key] = Context(backend, ordinal)
    return ctx


class NativeWeight:
    """A blockfp8_weight handle; `keep` holds whatever memory it borrows."""

    def __init__(self, handle, keep=()):
        self.handle = handle
        self.keep = keep
        info = WeightInfo()
        check(lib.blockfp8_weight_get_info(handle, ctypes.byref(info)))
        self.n, self.k = info.n, info.k
        self.block = (info.block_n, info.block_k)
        self.fp8_format = info.fp8_format
        self.borrowed = bool(info.borrowed)

    def close(self):
        if self.handle:
            lib.blockfp8_weight_destroy(self.handle)
            self.handle = None
        self.keep = ()

    def __del__(self):
        if lib is not None:
            self.close()


def make_weight(kind, ctx, stream, q_ptr, s_ptr, n, k, block, fp8_format, keep=()):
    """kind: 'prepare' (device copy), 'prepare_host' or 'borrow'."""
    fn = {"prepare": lib.blockfp8_weight_prepare, "prepare_host": lib.blockfp8_weight_prepare_host, "borrow": lib.blockfp8_weight_borrow}[kind]
    handle = ctypes.c_void_p()
    check(fn(ctx.handle, stream, q_ptr, s_ptr, n, k, block[0], block[1], fp8_format, ctypes.byref(handle)))
    return NativeWeight(handle, keep)
