//! NVIDIA backend (feature `cuda`): kernels from `cuda/` (embedded cubins), the cuBLASLt
//! block-scaled FP8 default path, all through cudarc's driver API (libcuda and libcublasLt
//! are loaded at run time, so a build without CUDA installed still links and runs).

pub mod bench;
pub mod bf16_gemm;
pub mod cublaslt;
mod gemm_launch;
pub mod kernels;
mod runtime;

use std::collections::HashMap;
use std::sync::Mutex;

use cudarc::driver::{sys, CudaContext};

use crate::backend::{Backend, BackendKind, TimingOptions};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::gemm::{GemmPath, GemmProblem, GemmShape, OutDtype, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, ScaleLayout, TokenQuantOptions};
use runtime::{arg, ptr, DriverResultExt, Gpu, BACKEND};

/// (Mp, N, K, output dtype) of a cuBLASLt problem.
type LtKey = (usize, usize, usize, OutDtype);

pub struct CudaBackend {
    device: Device,
    cc: (i32, i32),
    gpu: Gpu,
    /// cuBLASLt handle, or why the vendor path is unavailable on this device.
    lt: std::result::Result<cublaslt::LtHandle, String>,
    /// Vendor support per (Mp, N, K, out): cuBLASLt's own verdict, asked once.
    lt_verdicts: Mutex<HashMap<LtKey, std::result::Result<(), String>>>,
    workspace: std::sync::OnceLock<cudarc::driver::CudaSlice<u8>>,
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::BackendUnavailable { backend: BACKEND, reason: reason.into() }
}

fn device_count() -> Result<usize> {
    if !runtime::driver_present() {
        return Err(unavailable("the NVIDIA driver library (libcuda.so) was not found: no NVIDIA GPU or driver on this machine"));
    }
    CudaContext::device_count().dev("cuDeviceGetCount").map(|n| n.max(0) as usize).map_err(|e| unavailable(format!("no usable NVIDIA device ({e})")))
}

fn describe(ordinal: usize, ctx: &CudaContext) -> Result<(Device, (i32, i32))> {
    use sys::CUdevice_attribute as At;
    let name = ctx.name().dev("cuDeviceGetName")?;
    let major = ctx.attribute(At::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).dev("cuDeviceGetAttribute(CC_MAJOR)")?;
    let minor = ctx.attribute(At::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).dev("cuDeviceGetAttribute(CC_MINOR)")?;
    let sms = ctx.attribute(At::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).dev("cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)")?;
    let dev = Device {
        backend: BackendKind::Cuda,
        ordinal,
        name,
        arch: format!("sm_{major}{minor}"),
        fp8: Fp8Format::E4m3fn,
        compute_units: sms.max(0) as u32,
        pci_id: None,
    };
    Ok((dev, (major, minor)))
}

impl CudaBackend {
    pub fn new(ordinal: usize) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(unavailable(format!("device {ordinal} requested, {count} NVIDIA device(s) present")));
        }
        let gpu = Gpu::open(ordinal)?;
        let (device, cc) = describe(ordinal, &gpu.ctx)?;
        if kernels::cubin(cc, kernels::QUANT_MODULE).is_none() {
            return Err(unavailable(format!(
                "{} is {} but this build has cubins for {:?} only (set BLOCKFP8_CUDA_ARCHS and rebuild)",
                device.name,
                device.arch,
                kernels::built_archs()
            )));
        }
        let lt = if cc != (9, 0) {
            Err(format!("cuBLASLt block-scaled FP8 needs compute capability 9.0, device is {}", device.arch))
        } else {
            match cublaslt::library_version() {
                Err(why) => Err(why),
                Ok(v) if v < cublaslt::MIN_VERSION => Err(format!("cuBLASLt {v} is older than {} (no block-scaled FP8)", cublaslt::MIN_VERSION)),
                Ok(_) => cublaslt::LtHandle::new().map_err(|e| e.to_string()),
            }
        };
        if let Err(why) = &lt {
            log::info!("cuda: vendor path disabled: {why}");
        }
        Ok(CudaBackend { device, cc, gpu, lt, lt_verdicts: Mutex::new(HashMap::new()), workspace: Default::default() })
    }

    /// The ptxas report of this build (registers, shared memory, spills per kernel).
    pub fn resource_report() -> &'static str {
        kernels::RESOURCE_REPORT
    }

    fn function(&self, module: &'static str, symbol: &'static str, smem: u32) -> Result<runtime::Function> {
        let image = kernels::cubin(self.cc, module).ok_or_else(|| Error::Unsupported { path: "cuda kernel".into(), reason: format!("no {module} cubin for {}", self.device.arch) })?;
        self.gpu.function(module, image, symbol, smem)
    }

    fn check_shape(&self, shape: &GemmShape) -> std::result::Result<(), String> {
        if shape.block != (128, 128) {
            return Err(format!("block {:?}: CUDA paths support (128, 128) only", shape.block));
        }
        if shape.format != Fp8Format::E4m3fn {
            return Err(format!("{:?} inputs: NVIDIA GPUs compute in e4m3fn", shape.format));
        }
        Ok(())
    }

    fn vendor_supports(&self, shape: &GemmShape) -> std::result::Result<(), String> {
        let h = self.lt.as_ref().map_err(|w| w.clone())?;
        if shape.n % 4 != 0 {
            return Err(format!("cuBLASLt block-scaled FP8 needs N % 4 == 0 (N = {})", shape.n));
        }
        if shape.k % 16 != 0 {
            return Err(format!("cuBLASLt FP8 needs K % 16 == 0 (K = {})", shape.k));
        }
        let key = (shape.padded_m(), shape.n, shape.k, shape.out_dtype);
        let mut cache = self.lt_verdicts.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(key)
            .or_insert_with(|| {
                cublaslt::LtPlan::new(h, key.0, key.1, key.2, key.3).map(|_| ()).map_err(|e| format!("cuBLASLt has no algorithm for Mp={} N={} K={} ({e})", key.0, key.1, key.2))
            })
            .clone()
    }

    /// Quantizes `x` already in device memory (bf16 bits or f32) into `q` and `s`.
    #[allow(clippy::too_many_arguments)]
    fn quant_tokens_dev(
        &self,
        x: u64,
        input_bf16: bool,
        m: usize,
        k: usize,
        opts: &TokenQuantOptions,
        q: u64,
        s: u64,
    ) -> Result<()> {
        let groups = k.div_ceil(128);
        let (sym, gx) = kernels::quant_symbol(input_bf16, groups);
        let f = self.function(kernels::QUANT_MODULE, sym, 0)?;
        let gy = 16 / gx;
        let (s_stride_m, s_stride_g) = opts.layout.strides(m, groups);
        let (s_stride_m, s_stride_g) = (s_stride_m as i32, s_stride_g as i32);
        let (mi, ki) = (m as i32, k as i32);
        let fp8_max = opts.fp8_max.unwrap_or(448.0);
        let ue8m0 = opts.ue8m0 as i32;
        let grid = (groups.div_ceil(gx as usize) as u32, m.div_ceil(gy as usize) as u32, 1);
        let mut args = [arg(&x), arg(&q), arg(&s), arg(&mi), arg(&ki), arg(&fp8_max), arg(&s_stride_m), arg(&s_stride_g), arg(&ue8m0)];
        // SAFETY: argument list matches quant_group_body's; buffers sized by the caller.
        unsafe { self.gpu.launch(&f, grid, (8 * gx, gy, 1), 0, &mut args) }
    }

    fn check_quant_args(&self, x_len: usize, m: usize, k: usize, opts: &TokenQuantOptions) -> Result<()> {
        const OP: &str = "quantize_tokens";
        if opts.group != 128 {
            return Err(Error::Unsupported { path: "cuda quantization".into(), reason: format!("group {} (the CUDA kernel supports 128)", opts.group) });
        }
        if opts.format != Fp8Format::E4m3fn {
            return Err(Error::invalid(OP, format!("{:?}: NVIDIA GPUs use e4m3fn", opts.format)));
        }
        if m == 0 || k == 0 {
            return Err(Error::shape(OP, format!("M and K must be >= 1, got M={m} K={k}")));
        }
        match m.checked_mul(k) {
            Some(e) if e <= i32::MAX as usize => {}
            _ => return Err(Error::shape(OP, format!("M*K overflows 32-bit indexing (M={m} K={k})"))),
        }
        if x_len != m * k {
            return Err(Error::shape(OP, format!("input has {x_len} values, expected M*K = {m}*{k} = {}", m * k)));
        }
        if let Some(v) = opts.fp8_max {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(OP, format!("fp8_max {v} must be finite and positive")));
            }
        }
        Ok(())
    }

    /// Runs the product `launches` times on one set of device buffers (C poisoned before
    /// each launch) and returns each output: what a caller that keeps its buffers, or a
    /// replayed CUDA graph, gets. Split K must leave its workspace ready for the next launch.
    pub fn gemm_relaunched(&self, p: &GemmProblem, path: &GemmPath, launches: usize) -> Result<Vec<Output>> {
        let bufs = self.upload_checked(p, path)?;
        (0..launches)
            .map(|_| {
                gemm_launch::run(self, &bufs, path)?;
                gemm_launch::download(&self.gpu, &bufs)
            })
            .collect()
    }

    /// The problem checked (inputs, then whether `path` can run it) before any launch.
    fn check_gemm_call(&self, p: &GemmProblem, path: &GemmPath) -> Result<()> {
        p.validate()?;
        self.supports(&p.shape, path).map_err(|reason| Error::Unsupported { path: format!("cuda {}", path.label()), reason })
    }

    /// `check_gemm_call`, then the problem's device buffers laid out for `path`.
    fn upload_checked(&self, p: &GemmProblem, path: &GemmPath) -> Result<gemm_launch::DeviceProblem> {
        self.check_gemm_call(p, path)?;
        gemm_launch::DeviceProblem::upload(&self.gpu, p, matches!(path, GemmPath::Vendor), gemm_launch::needs_split_ws(self, &p.shape, path))
    }

    /// Times token quantization of a [m, k] input (bf16 or f32, random) over rotating copies;
    /// returns per-launch seconds of each repeat. For the bandwidth benchmark.
    pub fn time_quantize_tokens(&self, m: usize, k: usize, input_bf16: bool, opts: &TokenQuantOptions, t: &TimingOptions) -> Result<Vec<f64>> {
        self.check_quant_args(m * k, m, k, opts)?;
        let in_bytes = m * k * if input_bf16 { 2 } else { 4 };
        let s_len = ScaleLayout::ColumnMajor.scale_count(m, k.div_ceil(128)); // enough for either layout
        let set_bytes = in_bytes + m * k + 4 * s_len;
        let copies = t.rotate_bytes.div_ceil(set_bytes).clamp(1, 16);
        let mut rng = 0x9E3779B97F4A7C15u64;
        let host: Vec<u16> = (0..m * k)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                half::bf16::from_f32(((rng >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 8.0).to_bits()
            })
            .collect();
        let mut sets = Vec::new();
        for _ in 0..copies {
            let x = if input_bf16 { self.gpu.upload(&host)? } else { self.gpu.upload(&host.iter().flat_map(|&b| [0u16, b]).collect::<Vec<u16>>())? };
            let q = self.gpu.zeros::<u8>(m * k)?;
            let s = self.gpu.zeros::<f32>(s_len)?;
            sets.push((x, q, s));
        }
        let st = &self.gpu.stream;
        let run = |i: usize| self.quant_tokens_dev(ptr(&sets[i].0, st), input_bf16, m, k, opts, ptr(&sets[i].1, st), ptr(&sets[i].2, st));
        gemm_launch::time_rotating(&self.gpu, copies, t, run)
    }
}

/// Every NVIDIA device the driver reports (none when no driver is present).
pub fn devices() -> Vec<Device> {
    let Ok(n) = device_count() else { return Vec::new() };
    (0..n)
        .filter_map(|i| {
            let ctx = CudaContext::new(i).ok()?;
            describe(i, &ctx).ok().map(|(d, _)| d)
        })
        .collect()
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn device(&self) -> &Device {
        &self.device
    }

    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        self.check_quant_args(x.len(), m, k, opts)?;
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { op: "quantize_tokens", what: format!("input #{i} is {}", x[i]) });
        }
        let groups = k.div_ceil(128);
        let s_len = opts.layout.scale_count(m, groups);
        let xd = self.gpu.upload(x)?;
        let qd = self.gpu.zeros::<u8>(m * k)?;
        let sd = self.gpu.zeros::<f32>(s_len)?;
        let st = &self.gpu.stream;
        self.quant_tokens_dev(ptr(&xd, st), false, m, k, opts, ptr(&qd, st), ptr(&sd, st))?;
        let q = self.gpu.download(&qd)?;
        let mut scales = self.gpu.download(&sd)?;
        scales.truncate(s_len);
        Ok(QuantizedTokens { m, k, group: 128, format: opts.format, layout: opts.layout, q, scales })
    }

    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        const OP: &str = "quantize_weight";
        if block != (128, 128) {
            return Err(Error::Unsupported { path: "cuda weight quantization".into(), reason: format!("block {block:?} (supports (128, 128))") });
        }
        if format != Fp8Format::E4m3fn {
            return Err(Error::invalid(OP, format!("{format:?}: NVIDIA GPUs use e4m3fn")));
        }
        if n == 0 || k == 0 {
            return Err(Error::shape(OP, format!("N and K must be >= 1, got N={n} K={k}")));
        }
        match n.checked_mul(k) {
            Some(e) if e <= i32::MAX as usize => {}
            _ => return Err(Error::shape(OP, format!("N*K overflows 32-bit indexing (N={n} K={k})"))),
        }
        if w.len() != n * k {
            return Err(Error::shape(OP, format!("weight has {} values, expected N*K = {}", w.len(), n * k)));
        }
        if let Some(i) = w.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { op: OP, what: format!("weight #{i} is {}", w[i]) });
        }
        let (nb, kb) = (n.div_ceil(128), k.div_ceil(128));
        let f = self.function(kernels::WEIGHT_QUANT_MODULE, kernels::WEIGHT_QUANT_SYMBOL, 0)?;
        let wd = self.gpu.upload(w)?;
        let qd = self.gpu.zeros::<u8>(n * k)?;
        let sd = self.gpu.zeros::<f32>(nb * kb)?;
        let st = &self.gpu.stream;
        let (wp, qp, sp) = (ptr(&wd, st), ptr(&qd, st), ptr(&sd, st));
        let (ni, ki, max) = (n as i32, k as i32, 448.0f32);
        let mut args = [arg(&wp), arg(&qp), arg(&sp), arg(&ni), arg(&ki), arg(&max)];
        // SAFETY: matches sm90_quant_weight_blocks_f32's parameters; buffers sized above.
        unsafe { self.gpu.launch(&f, (kb as u32, nb as u32, 1), (256, 1, 1), 0, &mut args)? };
        let q = self.gpu.download(&qd)?;
        let mut scales = self.gpu.download(&sd)?;
        scales.truncate(nb * kb);
        Ok(QuantizedWeight { n, k, block, format, q, scales })
    }

    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        self.check_shape(shape)?;
        match path {
            GemmPath::Tuned(cfg) => kernels::find_gemm(cfg, shape.out_dtype).map(|_| ()),
            GemmPath::KernelDefault => kernels::find_gemm(&kernels::heuristic_config(shape, self.device.compute_units), shape.out_dtype).map(|_| ()),
            GemmPath::Vendor => self.vendor_supports(shape),
        }
    }

    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output> {
        let bufs = self.upload_checked(p, path)?;
        gemm_launch::run(self, &bufs, path)?;
        gemm_launch::download(&self.gpu, &bufs)
    }

    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        self.check_gemm_call(p, path)?;
        gemm_launch::time(self, p, path, opts)
    }

    fn time_bf16_vendor_gemm(&self, p: &GemmProblem, opts: &TimingOptions) -> Result<(Vec<f64>, Output)> {
        p.validate()?;
        bf16_gemm::time(self, p, opts)
    }

    fn candidate_configs(&self) -> Vec<KernelConfig> {
        kernels::candidate_configs()
    }

    fn default_config(&self) -> KernelConfig {
        kernels::default_config()
    }
    fn default_config_for(&self, shape: &GemmShape) -> KernelConfig {
        kernels::heuristic_config(shape, self.device.compute_units)
    }
    fn pinned_config(&self, cfg: &KernelConfig, shape: &GemmShape) -> KernelConfig {
        kernels::with_split_k(cfg, kernels::split_k(cfg, shape, self.device.compute_units))
    }
}
