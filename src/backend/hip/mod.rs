//! AMD backend (feature `rocm`): the kernels of `hip/` and the rocBLAS default path, through
//! the HIP runtime.
//!
//! Layers: `sys` (raw entry points, integer status codes) -> `runtime` (checked calls and
//! owning types) -> this backend. `rocblas` is loaded at run time; `vendor_plan` holds the
//! GPU-free planning of the rocBLAS block-scaled path; `arch` and `probe` describe devices.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::backend::{Backend, BackendKind, GemmLaunch, Launches, QuantTokensArgs, QuantWeightArgs, TimingOptions};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::memory::RawBuffer;
use crate::quant::QuantizedWeight;
use crate::stream::Stream;
use crate::types::{GemmPath, GemmShape, ScaleLayout};

pub mod abi;
pub mod arch;
mod emulated;
pub mod emulator;
mod exec;
mod launcher;
mod memory;
pub mod kernels;
pub mod probe;
pub mod rocblas;
pub mod runtime;
pub mod sys;
pub mod vendor_plan;

use rocblas::RocBlas;
pub use emulated::EmulatedHip;
use runtime::{DeviceBuffer, Event, Module};

/// Build-time variable listing the architectures to embed code objects for.
pub const ARCHS_ENV: &str = "BLOCKFP8_HIP_ARCHS";

pub use probe::devices;

/// One AMD GPU with the crate's code object loaded.
// Fields drop in declaration order: the launcher (functions, rocBLAS handle, module) goes
// first, and the stream (used to clear new allocations) after it.
pub struct HipBackend {
    launcher: Arc<launcher::RuntimeLauncher>,
    stream: runtime::Stream,
    device: Device,
    full_arch: String,
    /// Whether rocBLAS FP8 can run here, or why it cannot (decided once).
    vendor: std::result::Result<(), String>,
    workspace_bytes: usize,
}

impl HipBackend {
    /// Opens device `ordinal`; `BackendUnavailable` with the HIP error where there is none.
    pub fn new(ordinal: usize) -> Result<Self> {
        let unavailable = |reason: String| Error::BackendUnavailable { backend: "rocm", reason };
        let count = runtime::result::device_count().map_err(|e| unavailable(e.to_string()))?;
        if count == 0 {
            return Err(unavailable(probe::no_device_reason().unwrap_or_else(|| "no AMD GPU found".into())));
        }
        if ordinal >= count {
            return Err(unavailable(format!("device ordinal {ordinal} out of range: the HIP runtime lists {count} device(s)")));
        }
        // An arch without fp8 matrix instructions fails here, naming the arch.
        let probed = probe::probe(ordinal).map_err(|e| unavailable(format!("device {ordinal}: {e}")))?;
        let gfx = probed.device.arch.clone();
        let image = code_object_for(&gfx).map_err(unavailable)?;
        arch::check_code_object_for(image, &probed.full_arch).map_err(|why| unavailable(format!("embedded code object for {gfx}: {why}")))?;
        let stream = runtime::Stream::new(ordinal)?;
        let module = Module::load(ordinal, format!("blockfp8 {gfx}"), Cow::Borrowed(image))?;
        let vendor = RocBlas::shared().and_then(|lib| match lib.fp8_unavailable(&probed.full_arch) {
            None => Ok(lib),
            Some(why) => Err(why),
        });
        let runtime = runtime::result::runtime_version().map_or_else(|e| e.to_string(), |v| v.to_string());
        log::info!("rocm device {ordinal}: {} ({}, {} CUs), HIP runtime {runtime}", probed.device.name, probed.full_arch, probed.device.compute_units);
        match &vendor {
            Ok(lib) => log::info!("rocm device {ordinal} ({gfx}): rocBLAS {} at {} serves the vendor FP8 path", lib.version(), lib.path()),
            Err(why) => log::info!("rocm device {ordinal} ({gfx}): no vendor FP8 path: {why}; the kernel default config is the fallback"),
        }
        let decision = vendor.as_ref().map(|_| ()).map_err(|w| w.clone());
        let launcher = Arc::new(launcher::RuntimeLauncher { ordinal, compute_units: probed.device.compute_units, module, functions: Mutex::new(HashMap::new()), vendor, handle: Mutex::new(None) });
        Ok(HipBackend { launcher, stream, device: probed.device, full_arch: probed.full_arch, vendor: decision, workspace_bytes: vendor_plan::DEFAULT_WORKSPACE_BYTES })
    }

    /// The gcnArchName with target features.
    pub fn full_arch(&self) -> &str {
        &self.full_arch
    }

    /// Why the rocBLAS path is unavailable here, if it is.
    pub fn vendor_unavailable(&self) -> Option<&str> {
        self.vendor.as_ref().err().map(|s| s.as_str())
    }

    /// Bounds the rocBLAS path's fp32 workspace (default 256 MiB).
    pub fn set_workspace_bytes(&mut self, bytes: usize) {
        self.workspace_bytes = bytes.max(1);
    }

    fn dyn_launcher(&self) -> Arc<dyn launcher::HipLauncher> {
        Arc::clone(&self.launcher) as Arc<dyn launcher::HipLauncher>
    }
}

/// The GEMM instantiation `path` names, or why there is none.
pub fn kernel_for(shape: &GemmShape, path: &GemmPath) -> std::result::Result<kernels::GemmKernel, String> {
    exec::kernel_for(shape, path, false)
}

/// `Backend::supports` without a GPU: whether `path` can run `shape` on `device`, given the
/// vendor decision (`Err(reason)` when rocBLAS FP8 is unavailable) and the workspace bound.
pub fn check_support(
    device: &Device,
    vendor: std::result::Result<(), &str>,
    workspace_bytes: usize,
    shape: &GemmShape,
    path: &GemmPath,
) -> std::result::Result<(), String> {
    check_support_of(device, vendor, workspace_bytes, shape, path, false)
}

/// [`check_support`], restricted to the emulation library's kernels when `emulated_only`.
pub(crate) fn check_support_of(
    device: &Device,
    vendor: std::result::Result<(), &str>,
    workspace_bytes: usize,
    shape: &GemmShape,
    path: &GemmPath,
    emulated_only: bool,
) -> std::result::Result<(), String> {
    if shape.block != (vendor_plan::N_BLOCK, vendor_plan::K_BLOCK) {
        return Err(format!("HIP kernels support (128, 128) scale blocks only, got {:?}", shape.block));
    }
    if shape.format != device.fp8 {
        return Err(format!("inputs are {:?} but {} ({}) reads {:?}", shape.format, device.name, device.arch, device.fp8));
    }
    match path {
        GemmPath::Vendor => {
            vendor.map_err(str::to_string)?;
            let plan = vendor_plan::VendorPlan::new(shape.m, shape.n, shape.k, ScaleLayout::RowMajor, workspace_bytes).map_err(|e| e.to_string())?;
            plan.check_bounds()
        }
        other => exec::kernel_for(shape, other, emulated_only).map(|_| ()),
    }
}

/// The embedded code object for `gfx`, or an error naming the arch and the build variable.
/// Target features ("gfx942:sramecc+:xnack-") are ignored: the code objects serve any.
pub fn code_object_for(gfx: &str) -> std::result::Result<&'static [u8], String> {
    let gfx = arch::base_arch(gfx);
    if !arch::is_gfx_name(gfx) {
        return Err(format!("{gfx:?} is not an AMD gfx architecture (expected e.g. gfx942 or gfx950)"));
    }
    kernels::code_object(gfx).ok_or_else(|| {
        let built = kernels::compiled_archs();
        format!(
            "this build embeds no code object for {gfx} (built for: {}); rebuild with {ARCHS_ENV}={gfx} (or a list including it)",
            if built.is_empty() { "none".to_string() } else { built.join(", ") }
        )
    })
}

impl HipBackend {
    /// Converts an OCP e4m3fn weight in place to e4m3fnuz on the GPU (loading OCP
    /// checkpoints on gfx942): byte 0x80 -> 0x00, scales x2, same dequantized values.
    /// Same checks and result as [`QuantizedWeight::convert_to_fnuz`] on the CPU.
    pub fn convert_weight_to_fnuz(&self, w: &mut QuantizedWeight) -> Result<()> {
        const OP: &str = "convert_e4m3fn_to_fnuz";
        if w.format != Fp8Format::E4m3fn {
            return Err(Error::invalid(OP, "the weight is already e4m3fnuz"));
        }
        let want_scales = w.n.div_ceil(w.block.0.max(1)) * w.k.div_ceil(w.block.1.max(1));
        if w.q.len() != w.n * w.k || w.scales.len() != want_scales {
            return Err(Error::shape(OP, format!("{} bytes and {} scales for a {} x {} weight in {:?} blocks", w.q.len(), w.scales.len(), w.n, w.k, w.block)));
        }
        if let Some(i) = w.scales.iter().position(|s| !(s * 2.0).is_finite()) {
            return Err(Error::NonFinite { op: OP, what: format!("scale #{i} ({}) doubled is not finite", w.scales[i]) });
        }
        let stream = self.new_stream()?;
        let q = self.alloc(w.q.len())?;
        let s = self.alloc(4 * w.scales.len())?;
        let scale_bytes: Vec<u8> = w.scales.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut back = vec![0u8; scale_bytes.len()];
        // SAFETY: fresh buffers of exactly these sizes.
        unsafe {
            self.copy_to_device(&stream, q.addr(), &w.q)?;
            self.copy_to_device(&stream, s.addr(), &scale_bytes)?;
            self.enqueue_convert_to_fnuz(&stream, q.addr(), w.q.len(), s.addr(), w.scales.len())?;
            self.copy_to_host(&stream, q.addr(), &mut w.q)?;
            self.copy_to_host(&stream, s.addr(), &mut back)?;
        }
        w.scales = back.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        w.format = Fp8Format::E4m3fnuz;
        Ok(())
    }
}

impl Backend for HipBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Rocm
    }
    fn device(&self) -> &Device {
        &self.device
    }

    fn alloc(&self, bytes: usize) -> Result<RawBuffer> {
        let mut buf = DeviceBuffer::<u8>::alloc(self.device.ordinal, bytes.max(1))?;
        buf.zero(&self.stream)?;
        self.stream.synchronize()?;
        let addr = buf.ptr().as_raw() as u64;
        Ok(RawBuffer::new(addr, bytes, self.id(), Box::new(memory::HipAllocation { _buffer: buf })))
    }
    fn new_stream(&self) -> Result<Stream> {
        let s = runtime::Stream::new(self.device.ordinal)?;
        let raw = s.raw() as u64;
        Ok(Stream::owned(self.id(), raw, Box::new(s)))
    }
    /// The HIP runtime this backend binds has no stream-to-device query: a caller's stream is
    /// taken on its word (the device is bound before every call on it).
    fn check_raw_stream(&self, _raw: u64) -> Result<()> {
        Ok(())
    }
    /// No pointer-attribute query is bound: caller memory is taken on its word.
    fn check_raw_memory(&self, _addr: u64, _bytes: usize) -> Result<()> {
        Ok(())
    }
    unsafe fn copy_to_device(&self, stream: &Stream, dst: u64, src: &[u8]) -> Result<()> {
        memory::copy(self.device.ordinal, stream, dst as *mut _, src.as_ptr().cast(), src.len(), sys::MEMCPY_HOST_TO_DEVICE)?;
        // A pageable source may be read after the call returns; wait so the caller may reuse it.
        memory::synchronize(self.device.ordinal, stream)
    }
    unsafe fn copy_to_host(&self, stream: &Stream, src: u64, dst: &mut [u8]) -> Result<()> {
        memory::copy(self.device.ordinal, stream, dst.as_mut_ptr().cast(), src as *const _, dst.len(), sys::MEMCPY_DEVICE_TO_HOST)?;
        memory::synchronize(self.device.ordinal, stream)
    }
    unsafe fn copy_on_device(&self, stream: &Stream, dst: u64, src: u64, bytes: usize) -> Result<()> {
        memory::copy(self.device.ordinal, stream, dst as *mut _, src as *const _, bytes, sys::MEMCPY_DEVICE_TO_DEVICE)
    }
    fn synchronize(&self, stream: &Stream) -> Result<()> {
        memory::synchronize(self.device.ordinal, stream)
    }

    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        let vendor = self.vendor.as_ref().map(|_| ()).map_err(|why| why.as_str());
        check_support_of(&self.device, vendor, self.workspace_bytes, shape, path, false)
    }

    fn resolve_gemm(&self, shape: &GemmShape, path: &GemmPath, layout: ScaleLayout) -> Result<Box<dyn GemmLaunch>> {
        self.supports(shape, path).map_err(|reason| Error::Unsupported { path: format!("rocm {}", path.label()), reason })?;
        exec::resolve(&self.dyn_launcher(), shape, path, layout, self.workspace_bytes, false)
    }

    unsafe fn enqueue_quantize_tokens(&self, stream: &Stream, a: &QuantTokensArgs) -> Result<()> {
        exec::quantize_tokens(&*self.launcher, &self.device, stream, a)
    }

    unsafe fn enqueue_quantize_weight(&self, stream: &Stream, a: &QuantWeightArgs) -> Result<()> {
        exec::quantize_weight(&*self.launcher, &self.device, stream, a)
    }

    unsafe fn enqueue_convert_to_fnuz(&self, stream: &Stream, q: u64, bytes: usize, s: u64, scales: usize) -> Result<()> {
        exec::convert_to_fnuz(&*self.launcher, stream, q, bytes, s, scales)
    }

    /// Device events around each pass (HIP graph replay is not implemented: no AMD GPU to prove
    /// it on, so `Launches::Graph` times eager launches and says so once).
    fn time_passes(&self, stream: &Stream, copies: usize, opts: &TimingOptions, pass: &dyn Fn(usize) -> Result<()>) -> Result<Vec<f64>> {
        if opts.launches == Launches::Graph {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| log::warn!("rocm: timing launches eagerly (graph replay is not implemented for HIP: no AMD GPU to prove it on)"));
        }
        let copies = copies.max(1);
        for w in 0..opts.warmup {
            pass(w % copies)?;
        }
        self.synchronize(stream)?;
        let ordinal = self.device.ordinal;
        let (start, stop) = (Event::new(ordinal)?, Event::new(ordinal)?);
        // The events record on the crate's stream type; wrap the raw one without owning it.
        let st = std::mem::ManuallyDrop::new(runtime::Stream::borrowed(stream.raw() as sys::hipStream_t, ordinal));
        let mut seconds = Vec::with_capacity(opts.repeats);
        for _ in 0..opts.repeats.max(1) {
            start.record(&st)?;
            for i in 0..copies {
                pass(i)?;
            }
            stop.record(&st)?;
            stop.synchronize()?;
            seconds.push(stop.elapsed_ms_since(&start)? as f64 * 1e-3 / copies as f64);
        }
        Ok(seconds)
    }

    fn candidate_configs(&self) -> Vec<KernelConfig> {
        exec::distinct_configs(kernels::gemm_kernels())
    }

    fn default_config(&self) -> KernelConfig {
        kernels::default_gemm_config()
    }
}
