"""Prepared weights for the torch GEMM, made once per weight and cached.

`w8a8_block_fp8_matmul(A, B, As, Bs, ...)` takes the raw checkpoint tensors on every call, as
vLLM's op does. The native GEMM wants a prepared weight (on CUDA, cuBLASLt's padded copy of the
scales; on gfx942, an e4m3fn checkpoint converted to e4m3fnuz), so the first call with a weight
prepares it and later calls find it here:

- key: device, B.data_ptr(), Bs.data_ptr(), shapes, strides, dtype, block size;
- valid while B._version and Bs._version are unchanged (an in-place write to either, e.g.
  weight reloading, prepares it again); tensors made under torch.inference_mode() have no
  version counter, so their in-place writes are not seen (release() the entry after one);
- an entry holds references to B and Bs, so their memory cannot be freed and reused by another
  tensor at the same address while the entry lives. Entries beyond BLOCKFP8_WEIGHT_CACHE_SIZE
  (default 1024) are evicted least recently used; `clear()` drops them all;
- where the weight is already in the device's fp8 flavour it is borrowed, not copied (no
  second copy of a model's weights); an e4m3fn weight on an e4m3fnuz device is copied and
  converted once; non-contiguous scales are copied once.

Engines that want the preparation explicit call `blockfp8.prepare_weight(B, Bs, block_size)` at
load time: that returns the entry, pinned (never evicted) until `release()`.
"""

import collections
import logging
import os
import threading

import torch

from . import _lib, errors
from ._torch_util import context_for, fp8_code, stream_for

log = logging.getLogger("blockfp8")
_lock = threading.Lock()
_entries = collections.OrderedDict()
_stats = {"hits": 0, "misses": 0, "invalidated": 0, "evicted": 0}
# Evicted or invalidated native weights wait here until the device has run the work queued
# before their eviction (an event per weight), so memory in use is never freed.
_graveyard = []


def _max_entries():
    try:
        return max(1, int(os.environ.get("BLOCKFP8_WEIGHT_CACHE_SIZE", "1024")))
    except ValueError:
        raise errors.InvalidArgumentError("BLOCKFP8_WEIGHT_CACHE_SIZE must be an integer") from None


class PreparedWeight:
    """A weight prepared for the native GEMM (see the module doc). `B` and `Bs` are the tensors
    it was made from; `copied` says whether the native weight is a copy (conversion) or borrows
    their memory."""

    def __init__(self, key, B, Bs, block_size, native, versions):
        self.key = key
        self.B = B
        self.Bs = Bs
        self.block_size = tuple(block_size)
        self.native = native
        self.versions = versions
        self.pinned = False

    @property
    def copied(self):
        return not self.native.borrowed

    @property
    def fp8_dtype(self):
        from ._torch_util import FP8_DTYPES

        return FP8_DTYPES[self.native.fp8_format]

    def matmul(self, A, As, output_dtype=torch.float16):
        """`w8a8_block_fp8_matmul(A, self.B, As, self.Bs, self.block_size, output_dtype)`."""
        from .torch_ops import w8a8_block_fp8_matmul  # (torch_ops imports this module)

        return w8a8_block_fp8_matmul(A, self.B, As, self.Bs, self.block_size, output_dtype)

    def reserve(self, max_m, output_dtype=torch.float16, column_major_scales=False):
        """Resolves the GEMM plan for up to `max_m` rows on the current stream and allocates its
        workspace now, so a later CUDA/HIP graph capture allocates nothing."""
        ctx = context_for(self.B.device)
        layout = _lib.LAYOUT_COLUMN_MAJOR if column_major_scales else _lib.LAYOUT_ROW_MAJOR
        from ._torch_util import float_code

        _lib.check(_lib.lib.blockfp8_gemm_reserve(ctx.handle, stream_for(self.B.device), self.native.handle, layout, float_code(output_dtype, "output_dtype"), max_m))

    def release(self):
        """Unpins the weight and drops it from the cache (its native memory is freed once the
        device has run the work already queued)."""
        with _lock:
            if _entries.get(self.key) is self:
                del _entries[self.key]
            _bury(self)

    def __repr__(self):
        n, k = self.native.n, self.native.k
        return f"blockfp8.PreparedWeight({n}x{k}, block {self.block_size}, {self.fp8_dtype}, {'copied' if self.copied else 'borrowed'}{', pinned' if self.pinned else ''})"


def _version(t):
    """The tensor's version counter; None for inference-mode tensors, which have none (their
    in-place writes cannot be seen: prepare such a weight again with release() + lookup)."""
    try:
        return t._version
    except RuntimeError:
        return None


def _key(B, Bs, block_size):
    return (B.device.type, B.device.index, B.data_ptr(), Bs.data_ptr(), tuple(B.shape), tuple(Bs.shape), tuple(B.stride()), tuple(Bs.stride()), B.dtype, tuple(block_size))


def _bury(entry):
    """Frees `entry`'s native weight once the device is done with earlier work (call with _lock)."""
    native = entry.native
    if entry.B.device.type == "cpu":
        native.close()  # the CPU ran everything already
        return
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(entry.B.device))
    _graveyard.append((event, native))


def _sweep():
    """Frees graveyard weights whose events have completed (no host wait). Call with _lock."""
    keep = []
    for event, native in _graveyard:
        if event.query():
            native.close()
        else:
            keep.append((event, native))
    _graveyard[:] = keep


def _prepare(key, B, Bs, block_size):
    ctx = context_for(B.device)
    stream = stream_for(B.device)
    fmt = fp8_code(B.dtype, "B")
    if not B.is_contiguous():
        raise errors.LayoutError(f"B must be contiguous (row-major [N, K]), got strides {tuple(B.stride())}")
    scales = Bs if Bs.is_contiguous() else Bs.contiguous()  # one copy, kept by the entry
    n, k = B.shape
    kind = "borrow" if (fmt == ctx.fp8_format or ctx.backend == _lib.BACKEND_CPU) else "prepare"
    native = _lib.make_weight(kind, ctx, stream, B.data_ptr(), scales.data_ptr(), n, k, block_size, fmt, keep=(B, scales))
    log.debug("prepared weight %dx%d %s on %s (%s)", n, k, B.dtype, B.device, "borrowed" if kind == "borrow" else "copied")
    return PreparedWeight(key, B, Bs, block_size, native, (_version(B), _version(Bs)))


def lookup(B, Bs, block_size, pin=False):
    """The prepared weight of (B, Bs), made on first use (see the module doc)."""
    key = _key(B, Bs, block_size)
    versions = (_version(B), _version(Bs))
    with _lock:
        entry = _entries.get(key)
        if entry is not None and entry.versions == versions:
            _stats["hits"] += 1
            _entries.move_to_end(key)
            entry.pinned = entry.pinned or pin
            return entry
        if B.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            raise errors.DeviceError(
                "blockfp8: a weight seen for the first time (or changed) during CUDA/HIP graph capture; preparing it "
                "may allocate: run the op once before capturing, or call blockfp8.prepare_weight() at load time"
            )
        if _graveyard:
            _sweep()
        if entry is not None:
            _stats["invalidated"] += 1
            log.debug("weight %s changed in place: preparing it again", tuple(B.shape))
            del _entries[key]
            _bury(entry)
        _stats["misses"] += 1
        entry = _prepare(key, B, Bs, block_size)
        entry.pinned = pin
        _entries[key] = entry
        limit = _max_entries()
        if len(_entries) > limit:
            for old_key in [k for k, e in _entries.items() if not e.pinned][: len(_entries) - limit]:
                _stats["evicted"] += 1
                _bury(_entries.pop(old_key))
        return entry


def clear():
    """Drops every cached weight, pinned ones included."""
    with _lock:
        for entry in _entries.values():
            _bury(entry)
        _entries.clear()


def info():
    """Cache counters: entries, pinned, hits, misses, invalidated, evicted."""
    with _lock:
        return dict(_stats, entries=len(_entries), pinned=sum(e.pinned for e in _entries.values()), pending_free=len(_graveyard))
