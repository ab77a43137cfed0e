//! Device memory and stream calls of the real HIP device on the crate's buffer and stream types.

use super::runtime::{self, result, DeviceBuffer};
use super::sys;
use crate::error::Result;
use crate::memory::Allocation;
use crate::stream::Stream;

/// HIP device memory owned by a crate buffer (freed when the buffer drops).
pub(super) struct HipAllocation {
    pub(super) _buffer: DeviceBuffer<u8>,
}
impl Allocation for HipAllocation {}

/// Enqueues a copy of `bytes` bytes of `kind` on `stream`.
///
/// # Safety
/// Both addresses must be valid for `bytes` bytes in the spaces `kind` names.
pub(super) unsafe fn copy(ordinal: usize, stream: &Stream, dst: *mut std::ffi::c_void, src: *const std::ffi::c_void, bytes: usize, kind: std::os::raw::c_int) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    runtime::bind(ordinal)?;
    result::check("hipMemcpyAsync", sys::hipMemcpyAsync(dst, src, bytes, kind, stream.raw() as sys::hipStream_t))
}

/// Waits for `stream`.
pub(super) fn synchronize(ordinal: usize, stream: &Stream) -> Result<()> {
    runtime::bind(ordinal)?;
    // SAFETY: a stream of this device (checked where it was made or wrapped).
    result::check("hipStreamSynchronize", unsafe { sys::hipStreamSynchronize(stream.raw() as sys::hipStream_t) })
}
