//! Streams: the queue every operation of the device API is enqueued on. A stream is either the
//! crate's own (created by [`Context::new_stream`](crate::Context::new_stream), destroyed on
//! drop) or a caller's (`CUstream` / `hipStream_t`, wrapped by
//! [`Context::stream_from_raw`](crate::Context::stream_from_raw), never destroyed by the crate).
//! On the CPU backend and the HIP emulator work runs when it is enqueued.
#![warn(missing_docs)]

use std::any::Any;

use crate::types::DeviceId;

/// A queue of work on one device: the crate's own or a caller's (see the module doc).
pub struct Stream {
    device: DeviceId,
    raw: u64,
    /// The backend's owner of a stream the crate created; `None` for a caller's stream.
    _owner: Option<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({:#x} on {}, {})", self.raw, self.device, if self._owner.is_some() { "owned" } else { "borrowed" })
    }
}

impl Stream {
    /// A stream the crate owns; `owner` destroys it on drop.
    pub(crate) fn owned(device: DeviceId, raw: u64, owner: Box<dyn Any + Send + Sync>) -> Self {
        Stream { device, raw, _owner: Some(owner) }
    }

    /// A caller's stream handle, which the crate will not destroy.
    ///
    /// # Safety
    /// `raw` must be a stream of `device` (or 0, the legacy default stream of CUDA/HIP) that
    /// outlives this value and every operation enqueued through it.
    pub(crate) unsafe fn borrowed(device: DeviceId, raw: u64) -> Self {
        Stream { device, raw, _owner: None }
    }

    /// The raw handle (`CUstream` / `hipStream_t` as an integer; 0 on host backends).
    pub fn raw(&self) -> u64 {
        self.raw
    }
    /// The device the stream belongs to.
    pub fn device(&self) -> DeviceId {
        self.device
    }
    /// Whether the crate created this stream (and destroys it on drop).
    pub fn is_owned(&self) -> bool {
        self._owner.is_some()
    }
}
