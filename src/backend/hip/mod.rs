//! AMD backend (feature `rocm`): the kernels of `hip/` and the rocBLAS default path, through
//! the HIP runtime.
//!
//! Layers: `sys` (raw entry points, integer status codes) -> `runtime` (checked calls and
//! owning types) -> this backend. `rocblas` is loaded at run time; `vendor_plan` holds the
//! GPU-free planning of the rocBLAS block-scaled path; `arch` and `probe` describe devices.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::backend::{Backend, BackendKind, Launches, TimingOptions};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::gemm::{GemmPath, GemmProblem, GemmShape, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, ScaleLayout, TokenQuantOptions};

pub mod abi;
pub mod arch;
pub mod emulator;
mod exec;
pub mod kernels;
pub mod probe;
pub mod rocblas;
pub mod runtime;
pub mod sys;
pub mod vendor_plan;

use rocblas::RocBlas;
use runtime::{Event, Function, Module, Stream};

/// Build-time variable listing the architectures to embed code objects for.
pub const ARCHS_ENV: &str = "BLOCKFP8_HIP_ARCHS";

pub use probe::devices;

/// One AMD GPU with the crate's code object loaded.
// Fields drop in declaration order: the rocBLAS handle (in `exec`) and the functions go
// before the module, and the stream they use goes last.
pub struct HipBackend {
    /// Serialises work on the stream; holds the lazily created rocBLAS handle.
    exec: Mutex<exec::ExecState>,
    functions: Mutex<HashMap<String, Arc<Function>>>,
    module: Arc<Module>,
    stream: Stream,
    device: Device,
    full_arch: String,
    /// The loaded library when rocBLAS FP8 can run here, or why it cannot (decided once).
    vendor: std::result::Result<Arc<RocBlas>, String>,
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
        let stream = Stream::new(ordinal)?;
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
        Ok(HipBackend {
            exec: Mutex::new(exec::ExecState::default()),
            functions: Mutex::new(HashMap::new()),
            module,
            stream,
            device: probed.device,
            full_arch: probed.full_arch,
            vendor,
            workspace_bytes: vendor_plan::DEFAULT_WORKSPACE_BYTES,
        })
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

    fn function(&self, symbol: &str) -> Result<Arc<Function>> {
        let mut cache = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = cache.get(symbol) {
            return Ok(Arc::clone(f));
        }
        let f = Arc::new(self.module.function(symbol)?);
        cache.insert(symbol.to_string(), Arc::clone(&f));
        Ok(f)
    }
}

/// The GEMM instantiation `path` names, or why there is none.
pub fn kernel_for(shape: &GemmShape, path: &GemmPath) -> std::result::Result<kernels::GemmKernel, String> {
    let cfg = match path {
        GemmPath::Tuned(cfg) => cfg.clone(),
        GemmPath::KernelDefault => kernels::default_gemm_config(),
        GemmPath::Vendor => return Err("the vendor path runs no GEMM kernel".into()),
    };
    if cfg.cluster() != 1 {
        return Err(format!("config {}: thread-block clusters exist only on the CUDA (Hopper) kernel", cfg.short()));
    }
    kernels::find_gemm(&cfg, shape.out_dtype)
        .ok_or_else(|| format!("config {} with {} output is not compiled into this build (see `tuning-full`)", cfg.short(), shape.out_dtype.name()))
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
        other => kernel_for(shape, other).map(|_| ()),
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

impl Backend for HipBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Rocm
    }
    fn device(&self) -> &Device {
        &self.device
    }

    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        self.run_quantize_tokens(x, m, k, opts)
    }

    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        self.run_quantize_weight(w, n, k, block, format)
    }

    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        let vendor = self.vendor.as_ref().map(|_| ()).map_err(|why| why.as_str());
        check_support(&self.device, vendor, self.workspace_bytes, shape, path)
    }

    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output> {
        p.validate()?;
        self.supports(&p.shape, path).map_err(|reason| Error::Unsupported { path: format!("rocm {}", path.label()), reason })?;
        let mut state = self.exec.lock().unwrap_or_else(|e| e.into_inner());
        let resolved = self.resolve(&p.shape, p.a_scales.layout, path)?;
        let dp = exec::DeviceProblem::upload(&self.stream, p)?;
        let work = resolved.workspace(self.device.ordinal)?;
        self.enqueue(&mut state, &resolved, &dp, work.as_ref())?;
        self.stream.synchronize()?;
        dp.download(&self.stream)
    }

    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        p.validate()?;
        self.supports(&p.shape, path).map_err(|reason| Error::Unsupported { path: format!("rocm {}", path.label()), reason })?;
        let mut state = self.exec.lock().unwrap_or_else(|e| e.into_inner());
        let resolved = self.resolve(&p.shape, p.a_scales.layout, path)?;
        if opts.launches == Launches::Graph {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| log::warn!("rocm: timing launches eagerly (graph replay is not implemented for HIP: no AMD GPU to prove it on)"));
        }
        // Enough input copies that cycling through them exceeds the last-level cache.
        let input_bytes = p.a.len() + p.b.len();
        let copies = opts.rotate_bytes.div_ceil(input_bytes.max(1)).clamp(1, 64);
        let problems = (0..copies).map(|_| exec::DeviceProblem::upload(&self.stream, p)).collect::<Result<Vec<_>>>()?;
        let work = resolved.workspace(self.device.ordinal)?;
        let (start, stop) = (Event::new(self.device.ordinal)?, Event::new(self.device.ordinal)?);
        for i in 0..opts.warmup {
            self.enqueue(&mut state, &resolved, &problems[i % copies], work.as_ref())?;
        }
        self.stream.synchronize()?;
        let mut seconds = Vec::with_capacity(opts.repeats);
        for i in 0..opts.repeats {
            start.record(&self.stream)?;
            self.enqueue(&mut state, &resolved, &problems[(opts.warmup + i) % copies], work.as_ref())?;
            stop.record(&self.stream)?;
            stop.synchronize()?;
            seconds.push(stop.elapsed_ms_since(&start)? as f64 * 1e-3);
        }
        Ok(seconds)
    }

    fn candidate_configs(&self) -> Vec<KernelConfig> {
        let mut out: Vec<KernelConfig> = Vec::new();
        for k in kernels::gemm_kernels() {
            let cfg = k.config();
            if !out.contains(&cfg) {
                out.push(cfg);
            }
        }
        out
    }

    fn default_config(&self) -> KernelConfig {
        kernels::default_gemm_config()
    }
}
