//! Device memory: buffers the crate allocates (freed on drop), and views of them or of memory a
//! caller owns (a PyTorch tensor, another engine's allocator). Every buffer and view is typed,
//! sized and bound to one device, so an enqueue can check it in O(1) before any launch.
//!
//! Addresses are plain `u64` device addresses: a CUDA `CUdeviceptr`, a HIP device pointer, or a
//! host address on the CPU backend and the HIP emulator (where device memory is host memory).
#![warn(missing_docs)]

use std::marker::PhantomData;
use std::ops::Range;

use half::{bf16, f16};

use crate::error::{Error, Result};
use crate::types::{DeviceId, ElemType, InputDtype};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for f32 {}
    impl Sealed for half::bf16 {}
    impl Sealed for half::f16 {}
}

/// Element types a device buffer can hold: plain data without padding or invalid bit
/// patterns (sealed to u8, f32, bf16 and f16).
pub trait DeviceElem: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// The element type tag.
    const ELEM: ElemType;
}
impl DeviceElem for u8 {
    const ELEM: ElemType = ElemType::U8;
}
impl DeviceElem for f32 {
    const ELEM: ElemType = ElemType::F32;
}
impl DeviceElem for bf16 {
    const ELEM: ElemType = ElemType::Bf16;
}
impl DeviceElem for f16 {
    const ELEM: ElemType = ElemType::F16;
}

/// Element types the quantization kernels read.
pub trait QuantInput: DeviceElem {
    /// The kernels' input dtype tag.
    const INPUT: InputDtype;
}
impl QuantInput for f32 {
    const INPUT: InputDtype = InputDtype::F32;
}
impl QuantInput for bf16 {
    const INPUT: InputDtype = InputDtype::Bf16;
}
impl QuantInput for f16 {
    const INPUT: InputDtype = InputDtype::F16;
}

/// The bytes of a slice of device elements.
pub(crate) fn as_bytes<T: DeviceElem>(s: &[T]) -> &[u8] {
    // SAFETY: DeviceElem types are plain data with no padding (sealed above).
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of device elements; every bit pattern is a valid element.
pub(crate) fn as_bytes_mut<T: DeviceElem>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as `as_bytes`; any bytes written form valid u8/f32/bf16/f16 values.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

/// A backend's owner of one allocation: dropping it frees the memory. Its `Drop` must not
/// panic (a failed free is logged).
pub trait Allocation: Send + Sync {}

/// Untyped device memory the crate owns: an address, a size, its device and the owner that
/// frees it.
pub struct RawBuffer {
    addr: u64,
    bytes: usize,
    device: DeviceId,
    _owner: Box<dyn Allocation>,
}

static ALLOCATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many buffers the crate has allocated in this process, on any device: a caller (or a
/// test) reads it around `enqueue` calls to see that they allocate nothing.
pub fn allocation_count() -> u64 {
    ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

impl RawBuffer {
    /// Backends build these from their own allocations.
    pub fn new(addr: u64, bytes: usize, device: DeviceId, owner: Box<dyn Allocation>) -> Self {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        RawBuffer { addr, bytes, device, _owner: owner }
    }
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// Bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// The device the memory belongs to.
    pub fn device(&self) -> DeviceId {
        self.device
    }
}

impl std::fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawBuffer({} bytes at {:#x} on {})", self.bytes, self.addr, self.device)
    }
}

/// `len` elements of `T` on one device, owned by the crate (allocate through
/// [`Context::alloc`](crate::Context::alloc) or [`Context::upload`](crate::Context::upload)).
pub struct DeviceBuffer<T: DeviceElem> {
    raw: RawBuffer,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: DeviceElem> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer<{}>({} at {:#x} on {})", T::ELEM.name(), self.len, self.raw.addr, self.raw.device)
    }
}

impl<T: DeviceElem> DeviceBuffer<T> {
    /// Types `len` elements of a raw allocation, which must hold at least `len * size_of::<T>()` bytes.
    pub fn from_raw(raw: RawBuffer, len: usize) -> Result<Self> {
        match len.checked_mul(T::ELEM.bytes()) {
            Some(b) if b <= raw.bytes => Ok(DeviceBuffer { raw, len, _t: PhantomData }),
            _ => Err(Error::shape("device buffer", format!("{len} x {} does not fit in {} bytes", T::ELEM.name(), raw.bytes))),
        }
    }
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The device the memory belongs to.
    pub fn device(&self) -> DeviceId {
        self.raw.device
    }
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.raw.addr
    }
    /// The whole buffer, read-only.
    pub fn view(&self) -> DeviceView<'_, T> {
        DeviceView { addr: self.raw.addr, len: self.len, device: self.raw.device, _l: PhantomData }
    }
    /// The whole buffer, writable.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut { addr: self.raw.addr, len: self.len, device: self.raw.device, _l: PhantomData }
    }
    /// Elements `range`, read-only.
    pub fn slice(&self, range: Range<usize>) -> Result<DeviceView<'_, T>> {
        self.view().slice(range)
    }
    /// Elements `range`, writable.
    pub fn slice_mut(&mut self, range: Range<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (addr, len) = sub_range::<T>(self.raw.addr, self.len, range)?;
        Ok(DeviceViewMut { addr, len, device: self.raw.device, _l: PhantomData })
    }
}

fn sub_range<T: DeviceElem>(addr: u64, len: usize, range: Range<usize>) -> Result<(u64, usize)> {
    if range.start > range.end || range.end > len {
        return Err(Error::shape("device view", format!("range {range:?} outside a view of {len} {}", T::ELEM.name())));
    }
    Ok((addr + (range.start * T::ELEM.bytes()) as u64, range.end - range.start))
}

/// A read-only view of device elements: of a [`DeviceBuffer`], or of memory a caller owns.
#[derive(Clone, Copy)]
pub struct DeviceView<'a, T> {
    addr: u64,
    len: usize,
    device: DeviceId,
    _l: PhantomData<&'a [T]>,
}

impl<T: DeviceElem> std::fmt::Debug for DeviceView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceView<{}>({} at {:#x} on {})", T::ELEM.name(), self.len, self.addr, self.device)
    }
}

impl<'a, T: DeviceElem> DeviceView<'a, T> {
    /// Wraps `len` elements at device address `addr` on `device`.
    ///
    /// # Safety
    /// `addr` must address at least `len` elements of `T` in memory of `device` that stay
    /// allocated, and are not written by anyone else, for `'a` and until every operation
    /// enqueued on them has finished. Prefer [`Context::wrap`](crate::Context::wrap), which
    /// also asks the runtime whether the memory belongs to the device.
    pub unsafe fn from_raw_parts(addr: u64, len: usize, device: DeviceId) -> Self {
        DeviceView { addr, len, device, _l: PhantomData }
    }
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// The device the memory belongs to.
    pub fn device(&self) -> DeviceId {
        self.device
    }
    /// Bytes.
    pub fn bytes(&self) -> usize {
        self.len * T::ELEM.bytes()
    }
    /// Elements `range` of this view.
    pub fn slice(&self, range: Range<usize>) -> Result<DeviceView<'a, T>> {
        let (addr, len) = sub_range::<T>(self.addr, self.len, range)?;
        Ok(DeviceView { addr, len, device: self.device, _l: PhantomData })
    }
}

/// A writable view of device elements.
pub struct DeviceViewMut<'a, T> {
    addr: u64,
    len: usize,
    device: DeviceId,
    _l: PhantomData<&'a mut [T]>,
}

impl<T: DeviceElem> std::fmt::Debug for DeviceViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceViewMut<{}>({} at {:#x} on {})", T::ELEM.name(), self.len, self.addr, self.device)
    }
}

impl<'a, T: DeviceElem> DeviceViewMut<'a, T> {
    /// Wraps `len` writable elements at device address `addr` on `device`.
    ///
    /// # Safety
    /// As [`DeviceView::from_raw_parts`], and nothing else may read or write the memory while
    /// operations enqueued on this view are pending.
    pub unsafe fn from_raw_parts(addr: u64, len: usize, device: DeviceId) -> Self {
        DeviceViewMut { addr, len, device, _l: PhantomData }
    }
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// The device the memory belongs to.
    pub fn device(&self) -> DeviceId {
        self.device
    }
    /// Bytes.
    pub fn bytes(&self) -> usize {
        self.len * T::ELEM.bytes()
    }
    /// A read-only view of the same elements.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView { addr: self.addr, len: self.len, device: self.device, _l: PhantomData }
    }
    /// The same elements, borrowed for a shorter time.
    pub fn reborrow(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut { addr: self.addr, len: self.len, device: self.device, _l: PhantomData }
    }
    /// Elements `range` of this view, writable.
    pub fn slice_mut(&mut self, range: Range<usize>) -> Result<DeviceViewMut<'_, T>> {
        let (addr, len) = sub_range::<T>(self.addr, self.len, range)?;
        Ok(DeviceViewMut { addr, len, device: self.device, _l: PhantomData })
    }
}

/// Host memory standing in for device memory (CPU backend, HIP emulator): zeroed, aligned to
/// 256 bytes like GPU allocations, so alignment checks behave as on a GPU.
pub(crate) struct HostAllocation {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the allocation is plain memory owned by this value; access is through addresses
// whose users follow the enqueue rules.
unsafe impl Send for HostAllocation {}
unsafe impl Sync for HostAllocation {}
impl Allocation for HostAllocation {}

impl HostAllocation {
    pub(crate) const ALIGN: usize = 256;

    /// A zeroed allocation of `bytes` (at least one byte, so every buffer has an address).
    pub(crate) fn new(bytes: usize) -> Result<Self> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(1), Self::ALIGN)
            .map_err(|_| Error::invalid("alloc", format!("{bytes} bytes exceed the address space")))?;
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::OutOfMemory { backend: "host", bytes });
        }
        Ok(HostAllocation { ptr, layout })
    }
    pub(crate) fn addr(&self) -> u64 {
        self.ptr as u64
    }
}

impl Drop for HostAllocation {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// The memory and stream primitives of a backend whose device memory is host memory and whose
/// work runs as it is enqueued (the CPU backend, the emulated HIP device): expanded inside their
/// `impl Backend` blocks, so that both keep one definition of these semantics.
macro_rules! host_memory_primitives {
    () => {
        fn alloc(&self, bytes: usize) -> $crate::error::Result<$crate::memory::RawBuffer> {
            $crate::memory::host::alloc(self.id(), bytes)
        }
        fn new_stream(&self) -> $crate::error::Result<$crate::stream::Stream> {
            Ok($crate::stream::Stream::owned(self.id(), 0, Box::new(())))
        }
        /// Work runs as it is enqueued: any handle serves as a stream.
        fn check_raw_stream(&self, _raw: u64) -> $crate::error::Result<()> {
            Ok(())
        }
        /// Host memory cannot be told from other host memory.
        fn check_raw_memory(&self, _addr: u64, _bytes: usize) -> $crate::error::Result<()> {
            Ok(())
        }
        unsafe fn copy_to_device(&self, _stream: &$crate::stream::Stream, dst: u64, src: &[u8]) -> $crate::error::Result<()> {
            $crate::memory::host::copy(dst, src.as_ptr() as u64, src.len());
            Ok(())
        }
        unsafe fn copy_to_host(&self, _stream: &$crate::stream::Stream, src: u64, dst: &mut [u8]) -> $crate::error::Result<()> {
            $crate::memory::host::copy(dst.as_mut_ptr() as u64, src, dst.len());
            Ok(())
        }
        unsafe fn copy_on_device(&self, _stream: &$crate::stream::Stream, dst: u64, src: u64, bytes: usize) -> $crate::error::Result<()> {
            $crate::memory::host::copy(dst, src, bytes);
            Ok(())
        }
        fn synchronize(&self, _stream: &$crate::stream::Stream) -> $crate::error::Result<()> {
            Ok(())
        }
    };
}
pub(crate) use host_memory_primitives;

/// The memory operations of a backend whose device memory is host memory (the CPU backend and
/// the emulated HIP device): work runs when it is enqueued.
pub(crate) mod host {
    use super::{HostAllocation, RawBuffer};
    use crate::error::Result;
    use crate::types::DeviceId;

    /// `bytes` of zeroed, 256-byte aligned host memory for `device`.
    pub(crate) fn alloc(device: DeviceId, bytes: usize) -> Result<RawBuffer> {
        let a = HostAllocation::new(bytes)?;
        Ok(RawBuffer::new(a.addr(), bytes, device, Box::new(a)))
    }

    /// Copies `bytes` from `src` to `dst` (ranges may overlap).
    ///
    /// # Safety
    /// Both addresses must be valid host memory for `bytes` bytes.
    pub(crate) unsafe fn copy(dst: u64, src: u64, bytes: usize) {
        std::ptr::copy(src as *const u8, dst as *mut u8, bytes);
    }
}
