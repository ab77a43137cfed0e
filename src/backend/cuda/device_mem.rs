//! Device memory, streams and the pass timer of the CUDA backend on raw driver handles, so that
//! a caller's `CUstream` and memory (a PyTorch tensor) serve as well as the crate's own.

use std::sync::Arc;

use cudarc::driver::{result, sys, CudaStream};

use super::runtime::{DriverResultExt, Gpu, BACKEND};
use crate::backend::{Launches, TimingOptions};
use crate::error::{Error, Result};
use crate::memory::{Allocation, RawBuffer};
use crate::stream::Stream;
use crate::types::DeviceId;

/// One cuMemAlloc'd range, freed on drop (cuMemFree waits for work using it).
struct CudaAllocation {
    gpu: Arc<Gpu>,
    ptr: sys::CUdeviceptr,
}

impl Allocation for CudaAllocation {}

impl Drop for CudaAllocation {
    fn drop(&mut self) {
        let _ = self.gpu.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemAlloc in `alloc`, freed once.
        if let Err(e) = unsafe { result::free_sync(self.ptr) } {
            log::warn!("cuda: cuMemFree failed: {e:?}");
        }
    }
}

/// `bytes` of zeroed device memory (at least one byte, so every buffer has an address).
pub(super) fn alloc(gpu: &Arc<Gpu>, id: DeviceId, bytes: usize) -> Result<RawBuffer> {
    gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
    // SAFETY: a plain allocation in the bound context.
    let ptr = match unsafe { result::malloc_sync(bytes.max(1)) } {
        Ok(p) => p,
        Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => return Err(Error::OutOfMemory { backend: BACKEND, bytes }),
        Err(e) => return Err(super::runtime::driver_err("cuMemAlloc", e)),
    };
    let owner = CudaAllocation { gpu: Arc::clone(gpu), ptr };
    // Cleared on the legacy stream and waited for: the crate's streams are non-blocking, so
    // work enqueued on them next would not wait for an unfinished memset (and a late memset
    // would then wipe what that work wrote).
    // SAFETY: the allocation just made, bytes.max(1) long; the null stream is the legacy one.
    unsafe {
        result::memset_d8_async(ptr, 0, bytes.max(1), std::ptr::null_mut()).dev("cuMemsetD8Async")?;
        result::stream::synchronize(std::ptr::null_mut()).dev("cuStreamSynchronize(legacy)")?;
    }
    Ok(RawBuffer::new(ptr, bytes, id, Box::new(owner)))
}

/// A non-blocking stream of the device: it neither waits for nor holds up work on the legacy
/// default stream, and CUDA can capture it into a graph.
pub(super) fn new_stream(gpu: &Arc<Gpu>, id: DeviceId) -> Result<Stream> {
    let s: Arc<CudaStream> = gpu.ctx.new_stream().dev("cuStreamCreate")?;
    let raw = s.cu_stream() as u64;
    Ok(Stream::owned(id, raw, Box::new(s)))
}

/// A raw stream must belong to this backend's context (0, the legacy stream, always does).
pub(super) fn check_stream(gpu: &Gpu, raw: u64) -> Result<()> {
    if raw == 0 {
        return Ok(());
    }
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the driver validates the handle; `ctx` is writable.
    unsafe { sys::cuStreamGetCtx(raw as sys::CUstream, &mut ctx) }.result().dev("cuStreamGetCtx")?;
    if ctx != gpu.ctx.cu_ctx() {
        return Err(Error::WrongDevice { op: "stream_from_raw", what: format!("stream {raw:#x}"), expected: "this device's primary context".into(), found: "another context".into() });
    }
    Ok(())
}

/// `[addr, addr + bytes)` must lie inside one allocation of device `ordinal`.
pub(super) fn check_memory(gpu: &Gpu, ordinal: usize, addr: u64, bytes: usize) -> Result<()> {
    use sys::CUpointer_attribute as P;
    gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
    let mut dev_ordinal: i32 = -1;
    let mut start: sys::CUdeviceptr = 0;
    let mut size: usize = 0;
    // SAFETY: each out-parameter has the type the attribute returns.
    let attrs = unsafe {
        sys::cuPointerGetAttribute(&mut dev_ordinal as *mut i32 as *mut _, P::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr).result().and_then(|_| {
            sys::cuPointerGetAttribute(&mut start as *mut _ as *mut _, P::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, addr).result()?;
            sys::cuPointerGetAttribute(&mut size as *mut _ as *mut _, P::CU_POINTER_ATTRIBUTE_RANGE_SIZE, addr).result()
        })
    };
    if attrs.is_err() {
        return Err(Error::WrongDevice { op: "wrap", what: format!("memory at {addr:#x}"), expected: format!("cuda:{ordinal} device memory"), found: "memory CUDA does not know".into() });
    }
    if dev_ordinal != ordinal as i32 {
        return Err(Error::WrongDevice { op: "wrap", what: format!("memory at {addr:#x}"), expected: format!("cuda:{ordinal}"), found: format!("cuda:{dev_ordinal}") });
    }
    if addr + bytes as u64 > start + size as u64 {
        return Err(Error::shape("wrap", format!("{bytes} bytes at {addr:#x} run past the end of their allocation ({size} bytes at {start:#x})")));
    }
    Ok(())
}

/// Enqueues a copy of `rows` rows of `width` bytes from pitch `src_pitch` to pitch `dst_pitch`.
///
/// # Safety
/// Both ranges must be device memory of this context covering the rows.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn copy_rows(gpu: &Gpu, stream: &Stream, dst: u64, dst_pitch: usize, src: u64, src_pitch: usize, width: usize, rows: usize) -> Result<()> {
    gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
    // A literal, not zeroed(): the memory-type fields are enums with no zero variant.
    let p = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: width,
        Height: rows,
    };
    sys::cuMemcpy2DAsync_v2(&p, stream.raw() as sys::CUstream).result().dev("cuMemcpy2DAsync")
}

/// Warm-up passes, then per repeat one pass between two events; with `Launches::Graph` the
/// pass is captured once into a graph and replayed (no host launch cost between kernels). A
/// capture failure is an error, never a silent switch to eager launches.
pub(super) fn time_passes(gpu: &Gpu, stream: &Stream, copies: usize, t: &TimingOptions, pass: &dyn Fn(usize) -> Result<()>) -> Result<Vec<f64>> {
    let copies = copies.max(1);
    let st = stream.raw() as sys::CUstream;
    gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
    // Eager warm-up also makes the per-M cuBLASLt plans, which capture does not need then.
    for w in 0..t.warmup.max(1) {
        pass(w % copies)?;
    }
    // SAFETY: a stream of this context.
    unsafe { result::stream::synchronize(st) }.dev("cuStreamSynchronize")?;
    let graph = match t.launches {
        Launches::Graph => Some(Graph::capture(st, copies, pass)?),
        Launches::Eager => None,
    };
    let events = Events::new()?;
    let mut out = Vec::with_capacity(t.repeats.max(1));
    for _ in 0..t.repeats.max(1) {
        // SAFETY: events and stream of this context; the graph was instantiated here.
        unsafe {
            result::event::record(events.0, st).dev("cuEventRecord")?;
            match &graph {
                Some(g) => result::graph::launch(g.exec, st).dev("cuGraphLaunch")?,
                None => (0..copies).try_for_each(pass)?,
            }
            result::event::record(events.1, st).dev("cuEventRecord")?;
            result::event::synchronize(events.1).dev("cuEventSynchronize")?;
            out.push(result::event::elapsed(events.0, events.1).dev("cuEventElapsedTime")? as f64 * 1e-3 / copies as f64);
        }
    }
    Ok(out)
}

struct Events(sys::CUevent, sys::CUevent);

impl Events {
    fn new() -> Result<Self> {
        let a = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).dev("cuEventCreate")?;
        match result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT) {
            Ok(b) => Ok(Events(a, b)),
            Err(e) => {
                // SAFETY: created just above.
                let _ = unsafe { result::event::destroy(a) };
                Err(super::runtime::driver_err("cuEventCreate", e))
            }
        }
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        // SAFETY: both created by `new`, destroyed once.
        unsafe {
            let _ = result::event::destroy(self.0);
            let _ = result::event::destroy(self.1);
        }
    }
}

struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// One pass over the copies captured, instantiated, uploaded and replayed once (the first
    /// replay pays setup the timed ones should not).
    fn capture(st: sys::CUstream, copies: usize, pass: &dyn Fn(usize) -> Result<()>) -> Result<Graph> {
        // SAFETY: a stream of the bound context; capture ends below whatever the passes do.
        unsafe { result::stream::begin_capture(st, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) }.dev("cuStreamBeginCapture")?;
        let launched = (0..copies).try_for_each(pass);
        // Capture must end even after a failed launch, or the stream stays unusable.
        // SAFETY: the capture begun above.
        let ended = unsafe { result::stream::end_capture(st) }.dev("cuStreamEndCapture");
        launched?;
        let graph = ended?;
        // SAFETY: a graph just captured.
        let exec = match unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) } {
            Ok(e) => e,
            Err(e) => {
                // SAFETY: the graph made above, destroyed once.
                let _ = unsafe { result::graph::destroy(graph) };
                return Err(super::runtime::driver_err("cuGraphInstantiate", e));
            }
        };
        let g = Graph { graph, exec };
        // SAFETY: the instantiated graph on the capturing stream.
        unsafe {
            result::graph::upload(g.exec, st).dev("cuGraphUpload")?;
            result::graph::launch(g.exec, st).dev("cuGraphLaunch")?;
            result::stream::synchronize(st).dev("cuStreamSynchronize")?;
        }
        Ok(g)
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: made by `capture`, destroyed once.
        unsafe {
            let _ = result::graph::exec_destroy(self.exec);
            let _ = result::graph::destroy(self.graph);
        }
    }
}
