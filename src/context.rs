//! The device API's entry point: one [`Context`] per device holds the backend, the config
//! library and the GEMM plans resolved so far. Memory, streams, weight preparation and
//! activation quantization go through it; products go through its [`GemmPlan`]s.
//!
//! Nothing here waits for the device except `download`, `synchronize` and the preparation
//! of weights from host slices (which returns once the upload is enqueued).
#![warn(missing_docs)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::backend::{self, Backend, QuantTokensArgs, QuantWeightArgs};
use crate::config::Library;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::memory::{as_bytes, as_bytes_mut, DeviceBuffer, DeviceElem, DeviceView, DeviceViewMut, QuantInput};
use crate::plan::{DefaultPath, GemmPlan, GemmSpec, PathChooser};
use crate::quant::TokenQuantOptions;
use crate::stream::Stream;
use crate::types::{BackendKind, DeviceId};
use crate::weight::PreparedWeight;

/// One device with its config library and plan cache. Cheap to share (`Arc`) across threads.
pub struct Context {
    backend: Arc<dyn Backend>,
    chooser: PathChooser,
    plans: Mutex<HashMap<GemmSpec, Arc<GemmPlan>>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Context({} {})", self.backend.id(), self.backend.device().name)
    }
}

impl Context {
    /// A context on `backend` with `library`'s tuned configs; the no-file default path from
    /// `BLOCKFP8_DEFAULT_PATH`.
    pub fn new(backend: Arc<dyn Backend>, library: Arc<Library>) -> Self {
        Self::with_default_path(backend, library, DefaultPath::from_env())
    }

    /// A context whose no-file default path is `default` (instead of `BLOCKFP8_DEFAULT_PATH`).
    pub fn with_default_path(backend: Arc<dyn Backend>, library: Arc<Library>, default: DefaultPath) -> Self {
        let chooser = PathChooser::new(Arc::clone(&backend), library, default);
        Context { backend, chooser, plans: Mutex::new(HashMap::new()) }
    }

    /// Device `ordinal` of backend `kind`, with the configs of `BLOCKFP8_CONFIG_DIR` and the
    /// shipped ones.
    pub fn open(kind: BackendKind, ordinal: usize) -> Result<Self> {
        Ok(Self::new(backend::open(kind, ordinal)?, Arc::new(Library::from_env())))
    }

    /// The best device present (ROCm, then CUDA, then the CPU).
    pub fn best_available() -> Self {
        Self::new(backend::best_available(), Arc::new(Library::from_env()))
    }

    /// The backend the context computes with.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }
    /// The device's description (name, architecture, fp8 flavour, compute units).
    pub fn device(&self) -> &Device {
        self.backend.device()
    }
    /// The identity every buffer, stream and plan of this context carries.
    pub fn id(&self) -> DeviceId {
        self.backend.id()
    }
    /// The fp8 flavour the device computes in (e4m3fnuz on gfx942, e4m3fn elsewhere).
    pub fn fp8(&self) -> Fp8Format {
        self.backend.device().fp8
    }
    /// How this context picks a path per shape (tuned file, vendor BLAS, kernel default).
    pub fn path_chooser(&self) -> &PathChooser {
        &self.chooser
    }

    /// A new stream of this device, destroyed on drop.
    pub fn new_stream(&self) -> Result<Stream> {
        self.backend.new_stream()
    }

    /// Wraps a caller's stream (`CUstream` / `hipStream_t` as an integer; 0 is the legacy
    /// default stream). The crate never destroys it. Fails where the runtime says the stream
    /// belongs to another device.
    ///
    /// # Safety
    /// `raw` must be a live stream handle that outlives the returned value and all work
    /// enqueued through it.
    pub unsafe fn stream_from_raw(&self, raw: u64) -> Result<Stream> {
        self.backend.check_raw_stream(raw)?;
        Ok(Stream::borrowed(self.id(), raw))
    }

    /// Wraps `len` elements of `T` at device address `addr` of this device (a PyTorch
    /// tensor's `data_ptr()`, another allocator's memory). Fails where the runtime says the
    /// memory belongs to another device or is not device memory.
    ///
    /// # Safety
    /// As [`DeviceView::from_raw_parts`].
    pub unsafe fn wrap<'a, T: DeviceElem>(&self, addr: u64, len: usize) -> Result<DeviceView<'a, T>> {
        self.check_wrapped(addr, len, T::ELEM.bytes())?;
        Ok(DeviceView::from_raw_parts(addr, len, self.id()))
    }

    /// The writable form of [`wrap`](Self::wrap).
    ///
    /// # Safety
    /// As [`DeviceViewMut::from_raw_parts`].
    pub unsafe fn wrap_mut<'a, T: DeviceElem>(&self, addr: u64, len: usize) -> Result<DeviceViewMut<'a, T>> {
        self.check_wrapped(addr, len, T::ELEM.bytes())?;
        Ok(DeviceViewMut::from_raw_parts(addr, len, self.id()))
    }

    fn check_wrapped(&self, addr: u64, len: usize, elem: usize) -> Result<()> {
        let bytes = len.checked_mul(elem).ok_or_else(|| Error::shape("wrap", format!("{len} elements of {elem} bytes overflow")))?;
        if addr == 0 && bytes > 0 {
            return Err(Error::invalid("wrap", "null device address"));
        }
        self.backend.check_raw_memory(addr, bytes)
    }

    /// `len` zeroed elements of device memory.
    pub fn alloc<T: DeviceElem>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len.checked_mul(T::ELEM.bytes()).ok_or_else(|| Error::shape("alloc", format!("{len} x {} overflows", T::ELEM.name())))?;
        DeviceBuffer::from_raw(self.backend.alloc(bytes)?, len)
    }

    /// A new device buffer holding `host`, the copy enqueued on `stream`.
    pub fn upload<T: DeviceElem>(&self, stream: &Stream, host: &[T]) -> Result<DeviceBuffer<T>> {
        let mut buf = self.alloc::<T>(host.len())?;
        self.copy_to_device(stream, host, &mut buf.view_mut())?;
        Ok(buf)
    }

    /// Enqueues a copy of `host` into `dst` (same length).
    pub fn copy_to_device<T: DeviceElem>(&self, stream: &Stream, host: &[T], dst: &mut DeviceViewMut<'_, T>) -> Result<()> {
        self.check_device("copy to device", stream.device(), dst.device())?;
        if host.len() != dst.len() {
            return Err(Error::shape("copy to device", format!("{} host elements into a view of {}", host.len(), dst.len())));
        }
        // SAFETY: dst is a view of this device holding host.len() elements.
        unsafe { self.backend.copy_to_device(stream, dst.addr(), as_bytes(host)) }
    }

    /// `src` copied to the host once the work before it on `stream` is done (waits).
    pub fn download<T: DeviceElem>(&self, stream: &Stream, src: DeviceView<'_, T>) -> Result<Vec<T>> {
        let mut out = vec![T::default(); src.len()];
        self.copy_to_host(stream, src, &mut out)?;
        Ok(out)
    }

    /// `src` copied into `host` (same length) once the work before it on `stream` is done.
    pub fn copy_to_host<T: DeviceElem>(&self, stream: &Stream, src: DeviceView<'_, T>, host: &mut [T]) -> Result<()> {
        self.check_device("copy to host", stream.device(), src.device())?;
        if host.len() != src.len() {
            return Err(Error::shape("copy to host", format!("a view of {} into {} host elements", src.len(), host.len())));
        }
        // SAFETY: src is a view of this device holding host.len() elements.
        unsafe { self.backend.copy_to_host(stream, src.addr(), as_bytes_mut(host)) }
    }

    /// Waits for the work enqueued on `stream`.
    pub fn synchronize(&self, stream: &Stream) -> Result<()> {
        self.check_device("synchronize", stream.device(), self.id())?;
        self.backend.synchronize(stream)
    }

    fn check_device(&self, op: &'static str, stream: DeviceId, other: DeviceId) -> Result<()> {
        self.check_devices(op, &[("stream", stream), ("buffer", other)])
    }

    /// Every `(what, device)` must be this context's device.
    fn check_devices(&self, op: &'static str, items: &[(&str, DeviceId)]) -> Result<()> {
        match items.iter().find(|(_, d)| *d != self.id()) {
            Some((what, d)) => Err(Error::WrongDevice { op, what: (*what).into(), expected: self.id().to_string(), found: d.to_string() }),
            None => Ok(()),
        }
    }

    /// The plan for `spec`, resolved on first use and cached (a request with a larger
    /// `max_m` than the cached plan's resolves a new one).
    pub fn gemm_plan(&self, spec: GemmSpec) -> Result<Arc<GemmPlan>> {
        let key = GemmSpec { max_m: 0, ..spec };
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = plans.get(&key) {
            if p.max_m() >= spec.max_m {
                return Ok(Arc::clone(p));
            }
        }
        let plan = Arc::new(GemmPlan::new(&self.chooser, spec)?);
        plans.insert(key, Arc::clone(&plan));
        Ok(plan)
    }

    /// Enqueues token quantization of `x` [M, K] into `q` (fp8 [M, K]) and `s` (scales in
    /// `opts.layout`). Input values are not scanned on the device: a NaN input gives a NaN scale.
    #[allow(clippy::too_many_arguments)]
    pub fn quantize_tokens<T: QuantInput>(
        &self,
        stream: &Stream,
        x: DeviceView<'_, T>,
        m: usize,
        k: usize,
        opts: &TokenQuantOptions,
        q: &mut DeviceViewMut<'_, u8>,
        s: &mut DeviceViewMut<'_, f32>,
    ) -> Result<()> {
        const OP: &str = "quantize_tokens";
        self.check_devices(OP, &[("stream", stream.device()), ("input", x.device()), ("fp8 output", q.device()), ("scale output", s.device())])?;
        if m == 0 || k == 0 {
            return Err(Error::shape(OP, format!("M and K must be >= 1, got M={m} K={k}")));
        }
        match m.checked_mul(k) {
            Some(e) if e <= i32::MAX as usize => {}
            _ => return Err(Error::shape(OP, format!("M*K exceeds 2^31-1 elements (M={m} K={k})"))),
        }
        let fp8_max = crate::backend::check_quant_options(&*self.backend, OP, opts)?;
        let groups = k.div_ceil(opts.group);
        let want_s = opts.layout.scale_count(m, groups);
        for (what, have, want) in [("input", x.len(), m * k), ("fp8 output", q.len(), m * k), ("scale output", s.len(), want_s)] {
            if have != want {
                return Err(Error::shape(OP, format!("{what} has {have} elements, expected {want} (M={m} K={k}, {:?} scales)", opts.layout)));
            }
        }
        self.check_aligned(OP, &[("input", x.addr()), ("fp8 output", q.addr()), ("scale output", s.addr())])?;
        let args = QuantTokensArgs { x: x.addr(), input: T::INPUT, m, k, group: opts.group, q: q.addr(), s: s.addr(), layout: opts.layout, format: opts.format, fp8_max, ue8m0: opts.ue8m0 };
        // SAFETY: devices, lengths and alignment checked above.
        unsafe { self.backend.enqueue_quantize_tokens(stream, &args) }
    }

    fn check_aligned(&self, op: &'static str, addrs: &[(&str, u64)]) -> Result<()> {
        let align = self.backend.alignment();
        for &(what, addr) in addrs {
            if addr % align as u64 != 0 {
                return Err(Error::Misaligned { op, what: what.into(), addr, align });
            }
        }
        Ok(())
    }

    /// A quantized weight from host memory (fp8 [N, K] in `format`, scales [ceil(N/bn),
    /// ceil(K/bk)]) uploaded once; an OCP e4m3fn weight for an e4m3fnuz device (gfx942) is
    /// converted on the device (0x80 -> 0x00, scales x2).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_weight(&self, stream: &Stream, q: &[u8], scales: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<PreparedWeight> {
        const OP: &str = "prepare_weight";
        let (nb, kb) = check_weight_shape(OP, n, k, block, q.len(), scales.len())?;
        if let Some(i) = scales.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { op: OP, what: format!("weight scale #{i} is {}", scales[i]) });
        }
        let target = self.weight_target(OP, format)?;
        let qd = self.upload(stream, q)?;
        let sd = self.upload(stream, scales)?;
        self.finish_weight(stream, n, k, block, (nb, kb), format, target, qd, sd)
    }

    /// As [`prepare_weight`](Self::prepare_weight), from device memory (copied on the device;
    /// the scales are not scanned for NaN).
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_weight_from_device(
        &self,
        stream: &Stream,
        q: DeviceView<'_, u8>,
        scales: DeviceView<'_, f32>,
        n: usize,
        k: usize,
        block: (usize, usize),
        format: Fp8Format,
    ) -> Result<PreparedWeight> {
        const OP: &str = "prepare_weight";
        let (nb, kb) = self.check_device_weight(OP, stream, q, scales, n, k, block)?;
        let target = self.weight_target(OP, format)?;
        let qd = self.alloc::<u8>(q.len())?;
        let sd = self.alloc::<f32>(scales.len())?;
        // SAFETY: both pairs are views of this device of equal byte sizes.
        unsafe {
            self.backend.copy_on_device(stream, qd.addr(), q.addr(), q.bytes())?;
            self.backend.copy_on_device(stream, sd.addr(), scales.addr(), scales.bytes())?;
        }
        self.finish_weight(stream, n, k, block, (nb, kb), format, target, qd, sd)
    }

    /// A weight over the caller's device memory, not copied (an engine's resident checkpoint
    /// tensors): fp8 [N, K] already in the device's flavour and scales [ceil(N/bn),
    /// ceil(K/bk)]. Only the vendor path's own scale layout (cuBLASLt) is built, on `stream`.
    /// A weight that needs the e4m3fn -> e4m3fnuz conversion must be copied
    /// ([`prepare_weight_from_device`](Self::prepare_weight_from_device)).
    ///
    /// # Safety
    /// As [`DeviceView::from_raw_parts`] for both views, for as long as the returned weight
    /// and any work enqueued with it live; the memory must not change while that work runs.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn borrow_weight(
        &self,
        stream: &Stream,
        q: DeviceView<'_, u8>,
        scales: DeviceView<'_, f32>,
        n: usize,
        k: usize,
        block: (usize, usize),
        format: Fp8Format,
    ) -> Result<PreparedWeight> {
        const OP: &str = "borrow_weight";
        let (nb, kb) = self.check_device_weight(OP, stream, q, scales, n, k, block)?;
        if self.weight_target(OP, format)? != format {
            return Err(Error::invalid(OP, format!("a {format:?} weight must be converted for {} (copy it with prepare_weight_from_device)", self.device().name)));
        }
        self.check_aligned(OP, &[("weight", q.addr()), ("weight scales", scales.addr())])?;
        // The caller owns the memory: the buffers' owners free nothing.
        struct Borrowed;
        impl crate::memory::Allocation for Borrowed {}
        let id = self.id();
        let qd = DeviceBuffer::from_raw(crate::memory::RawBuffer::new(q.addr(), q.bytes(), id, Box::new(Borrowed)), q.len())?;
        let sd = DeviceBuffer::from_raw(crate::memory::RawBuffer::new(scales.addr(), scales.bytes(), id, Box::new(Borrowed)), scales.len())?;
        self.finish_weight(stream, n, k, block, (nb, kb), format, format, qd, sd)
    }

    /// A weight [N, K] (bf16/f16/f32 on the device) quantized on the device in 128x128 blocks,
    /// in the device's fp8 flavour.
    pub fn quantize_weight<T: QuantInput>(&self, stream: &Stream, w: DeviceView<'_, T>, n: usize, k: usize) -> Result<PreparedWeight> {
        const OP: &str = "quantize_weight";
        let block = (128, 128);
        self.check_devices(OP, &[("stream", stream.device()), ("weight", w.device())])?;
        let elems = n.checked_mul(k).filter(|e| *e <= i32::MAX as usize && n > 0 && k > 0);
        if elems != Some(w.len()) {
            return Err(Error::shape(OP, format!("weight has {} elements, expected N*K = {n}*{k} (1 ..= 2^31-1)", w.len())));
        }
        self.check_aligned(OP, &[("weight", w.addr())])?;
        let (nb, kb) = (n.div_ceil(128), k.div_ceil(128));
        let format = self.fp8();
        let qd = self.alloc::<u8>(n * k)?;
        let sd = self.alloc::<f32>(nb * kb)?;
        let args = QuantWeightArgs { w: w.addr(), input: T::INPUT, n, k, q: qd.addr(), s: sd.addr(), format };
        // SAFETY: w holds n*k elements of this device; q and s are fresh buffers of the sizes the kernel writes.
        unsafe { self.backend.enqueue_quantize_weight(stream, &args)? };
        self.finish_weight(stream, n, k, block, (nb, kb), format, format, qd, sd)
    }

    /// A weight given as device views: the views and the stream on this device, the lengths
    /// those of an N x K weight in `block` blocks. Returns (N blocks, K blocks).
    #[allow(clippy::too_many_arguments)]
    fn check_device_weight(&self, op: &'static str, stream: &Stream, q: DeviceView<'_, u8>, scales: DeviceView<'_, f32>, n: usize, k: usize, block: (usize, usize)) -> Result<(usize, usize)> {
        self.check_devices(op, &[("stream", stream.device()), ("weight", q.device()), ("weight scales", scales.device())])?;
        check_weight_shape(op, n, k, block, q.len(), scales.len())
    }

    /// The flavour a weight of `format` is stored in on this device.
    fn weight_target(&self, op: &'static str, format: Fp8Format) -> Result<Fp8Format> {
        if self.backend.kind() == BackendKind::Cpu {
            return Ok(format);
        }
        match (format, self.fp8()) {
            (f, d) if f == d => Ok(d),
            (Fp8Format::E4m3fn, Fp8Format::E4m3fnuz) => Ok(Fp8Format::E4m3fnuz),
            (f, d) => Err(Error::invalid(op, format!("a {f:?} weight cannot be converted to {d:?} (only e4m3fn -> e4m3fnuz)"))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_weight(
        &self,
        stream: &Stream,
        n: usize,
        k: usize,
        block: (usize, usize),
        (nb, kb): (usize, usize),
        format: Fp8Format,
        target: Fp8Format,
        q: DeviceBuffer<u8>,
        scales: DeviceBuffer<f32>,
    ) -> Result<PreparedWeight> {
        if format != target {
            // SAFETY: q and scales are this weight's own buffers of those lengths.
            unsafe { self.backend.enqueue_convert_to_fnuz(stream, q.addr(), q.len(), scales.addr(), scales.len())? };
        }
        // SAFETY: the scales hold nb * kb floats of this device.
        let vendor = unsafe { self.backend.vendor_weight_scales(stream, scales.addr(), nb, kb)? };
        let vendor_scales = match vendor {
            Some(raw) => {
                let len = raw.bytes() / 4;
                Some(DeviceBuffer::from_raw(raw, len)?)
            }
            None => None,
        };
        Ok(PreparedWeight { n, k, block, format: target, q, scales, vendor_scales })
    }
}

fn check_weight_shape(op: &'static str, n: usize, k: usize, block: (usize, usize), q_len: usize, s_len: usize) -> Result<(usize, usize)> {
    if n == 0 || k == 0 || block.0 == 0 || block.1 == 0 {
        return Err(Error::shape(op, format!("N, K and the block sides must be >= 1, got N={n} K={k} block {block:?}")));
    }
    match n.checked_mul(k) {
        Some(e) if e <= i32::MAX as usize && e == q_len => {}
        _ => return Err(Error::shape(op, format!("weight has {q_len} bytes, expected N*K = {n}*{k} (at most 2^31-1)"))),
    }
    let (nb, kb) = (n.div_ceil(block.0), k.div_ceil(block.1));
    if s_len != nb * kb {
        return Err(Error::shape(op, format!("weight scales have {s_len} values, expected ceil(N/{})*ceil(K/{}) = {nb}*{kb} = {}", block.0, block.1, nb * kb)));
    }
    Ok((nb, kb))
}
