//! NVIDIA backend (feature `cuda`): kernels from `cuda/` (embedded cubins), the cuBLASLt
//! block-scaled FP8 default path, all through cudarc's driver API (libcuda and libcublasLt
//! are loaded at run time, so a build without CUDA installed still links and runs).

pub mod bench;
pub mod bf16_gemm;
pub mod cublaslt;
mod device_mem;
mod gemm_launch;
pub mod kernels;
mod runtime;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext};

use crate::backend::{Backend, BackendKind, GemmLaunch, QuantTokensArgs, QuantWeightArgs, TimingOptions};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::memory::RawBuffer;
use crate::problem::{GemmProblem, Output};
use crate::quant::TokenQuantOptions;
use crate::stream::Stream;
use crate::types::{GemmPath, GemmShape, InputDtype, OutDtype, ScaleLayout};
use runtime::{arg, ptr, DriverResultExt, Gpu, BACKEND};

/// (Mp, N, K, output dtype) of a cuBLASLt problem.
type LtKey = (usize, usize, usize, OutDtype);

pub struct CudaBackend {
    device: Device,
    cc: (i32, i32),
    gpu: Arc<Gpu>,
    /// cuBLASLt handle, or why the vendor path is unavailable on this device.
    lt: std::result::Result<Arc<cublaslt::LtHandle>, String>,
    /// Vendor support per (Mp, N, K, out): cuBLASLt's own verdict, asked once.
    lt_verdicts: Mutex<HashMap<LtKey, std::result::Result<(), String>>>,
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
                Ok(_) => cublaslt::LtHandle::new().map(Arc::new).map_err(|e| e.to_string()),
            }
        };
        if let Err(why) = &lt {
            log::info!("cuda: vendor path disabled: {why}");
        }
        Ok(CudaBackend { device, cc, gpu: Arc::new(gpu), lt, lt_verdicts: Mutex::new(HashMap::new()) })
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

    /// Enqueues token quantization of `x` (device memory, `input` dtype) into `q` and `s` on `stream`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn quant_tokens_on(&self, stream: sys::CUstream, x: u64, input: InputDtype, m: usize, k: usize, q: u64, s: u64, layout: ScaleLayout, fp8_max: f32, ue8m0: bool) -> Result<()> {
        let groups = k.div_ceil(128);
        let (sym, gx) = kernels::quant_symbol(input, groups);
        let f = self.function(kernels::QUANT_MODULE, sym, 0)?;
        let gy = 16 / gx;
        let (s_stride_m, s_stride_g) = layout.strides(m, groups);
        let (s_stride_m, s_stride_g) = (s_stride_m as i32, s_stride_g as i32);
        let (mi, ki) = (m as i32, k as i32);
        let ue8m0 = ue8m0 as i32;
        let grid = (groups.div_ceil(gx as usize) as u32, m.div_ceil(gy as usize) as u32, 1);
        let mut args = [arg(&x), arg(&q), arg(&s), arg(&mi), arg(&ki), arg(&fp8_max), arg(&s_stride_m), arg(&s_stride_g), arg(&ue8m0)];
        // SAFETY: argument list matches quant_group_body's; buffers sized by the caller.
        self.gpu.launch_on(&f, grid, (8 * gx, gy, 1), 0, stream, &mut args)
    }

    /// Times token quantization of a [m, k] input (bf16 or f32, random) over rotating copies;
    /// returns per-launch seconds of each repeat. For the bandwidth benchmark.
    pub fn time_quantize_tokens(&self, m: usize, k: usize, input_bf16: bool, opts: &TokenQuantOptions, t: &TimingOptions) -> Result<Vec<f64>> {
        if m == 0 || k == 0 || m.checked_mul(k).is_none_or(|e| e > i32::MAX as usize) {
            return Err(Error::shape("quantize_tokens", format!("M={m} K={k}: sizes must be >= 1 and M*K at most 2^31-1")));
        }
        let in_bytes = m * k * if input_bf16 { 2 } else { 4 };
        let s_len = ScaleLayout::ColumnMajor.scale_count(m, k.div_ceil(128)); // enough for either layout
        let set_bytes = in_bytes + m * k + 4 * s_len;
        let copies = t.copies(set_bytes, 16);
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
        let input = if input_bf16 { InputDtype::Bf16 } else { InputDtype::F32 };
        let fp8_max = opts.effective_fp8_max();
        // SAFETY: each set holds an [m, k] input, m*k fp8 bytes and scales for either layout.
        let run = |i: usize| unsafe { self.quant_tokens_on(st.cu_stream(), ptr(&sets[i].0, st), input, m, k, ptr(&sets[i].1, st), ptr(&sets[i].2, st), opts.layout, fp8_max, opts.ue8m0) };
        gemm_launch::time_rotating(&self.gpu, copies, t, run)
    }

    /// The kernel `cfg` resolves to for `shape` (TMA needs K % 16 == 0; otherwise the mma.sync
    /// tile serves, same result).
    fn kernel_launch(&self, shape: &GemmShape, cfg: KernelConfig) -> Result<gemm_launch::KernelLaunch> {
        let mut inst = kernels::find_gemm(&cfg, shape.out_dtype).map_err(|reason| Error::Unsupported { path: format!("cuda kernel {}", cfg.short()), reason })?;
        let mut cfg = cfg;
        if inst.body != "mma" && shape.k % 16 != 0 {
            let fallback = kernels::unaligned_k_config();
            gemm_launch::log_unaligned_once(&cfg, &fallback, shape.k);
            inst = kernels::find_gemm(&fallback, shape.out_dtype).map_err(|reason| Error::Unsupported { path: format!("cuda kernel {}", fallback.short()), reason })?;
            cfg = fallback;
        }
        let function = self.function(inst.module, inst.symbol, inst.smem_bytes)?;
        let convert = self.function(kernels::SPLITK_MODULE, kernels::splitk_convert_symbol(shape.out_dtype), 0)?;
        let cluster = inst.cluster.max(1);
        let resident = if inst.body == "mma" {
            1
        } else if cluster > 1 {
            let r = self.gpu.max_active_clusters(&function, cluster, inst.threads, inst.smem_bytes)?;
            if r == 0 {
                return Err(Error::Unsupported { path: format!("cuda kernel {}", cfg.short()), reason: format!("no cluster of {cluster} CTAs fits on this device") });
            }
            r
        } else {
            self.gpu.blocks_per_sm(&function, inst.threads, inst.smem_bytes)?.max(1)
        };
        Ok(gemm_launch::KernelLaunch { gpu: Arc::clone(&self.gpu), shape: *shape, split_rule: kernels::SplitRule::new(&cfg), cfg, inst, function, convert, sms: self.device.compute_units, resident, maps: Default::default() })
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

    fn alloc(&self, bytes: usize) -> Result<RawBuffer> {
        device_mem::alloc(&self.gpu, self.id(), bytes)
    }
    fn new_stream(&self) -> Result<Stream> {
        device_mem::new_stream(&self.gpu, self.id())
    }
    fn check_raw_stream(&self, raw: u64) -> Result<()> {
        device_mem::check_stream(&self.gpu, raw)
    }
    fn check_raw_memory(&self, addr: u64, bytes: usize) -> Result<()> {
        device_mem::check_memory(&self.gpu, self.device.ordinal, addr, bytes)
    }
    unsafe fn copy_to_device(&self, stream: &Stream, dst: u64, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        result::memcpy_htod_async(dst, src, stream.raw() as sys::CUstream).dev("cuMemcpyHtoDAsync")
    }
    unsafe fn copy_to_host(&self, stream: &Stream, src: u64, dst: &mut [u8]) -> Result<()> {
        self.gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        if !dst.is_empty() {
            result::memcpy_dtoh_async(dst, src, stream.raw() as sys::CUstream).dev("cuMemcpyDtoHAsync")?;
        }
        self.synchronize(stream)
    }
    unsafe fn copy_on_device(&self, stream: &Stream, dst: u64, src: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        result::memcpy_dtod_async(dst, src, bytes, stream.raw() as sys::CUstream).dev("cuMemcpyDtoDAsync")
    }
    fn synchronize(&self, stream: &Stream) -> Result<()> {
        self.gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        // SAFETY: a stream of this context (checked when it was made or wrapped).
        unsafe { result::stream::synchronize(stream.raw() as sys::CUstream) }.dev("cuStreamSynchronize")
    }

    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        self.check_shape(shape)?;
        match path {
            GemmPath::Tuned(cfg) => kernels::find_gemm(cfg, shape.out_dtype).map(|_| ()),
            GemmPath::KernelDefault => kernels::find_gemm(&kernels::heuristic_config(shape, self.device.compute_units), shape.out_dtype).map(|_| ()),
            GemmPath::Vendor => self.vendor_supports(shape),
        }
    }

    fn resolve_gemm(&self, shape: &GemmShape, path: &GemmPath, layout: ScaleLayout) -> Result<Box<dyn GemmLaunch>> {
        self.check_shape(shape).map_err(|reason| Error::Unsupported { path: format!("cuda {}", path.label()), reason })?;
        Ok(match path {
            GemmPath::Vendor => {
                let lt = self.lt.as_ref().map_err(|w| Error::Unsupported { path: "cuda vendor".into(), reason: w.clone() })?;
                let launch = gemm_launch::VendorLaunch {
                    gpu: Arc::clone(&self.gpu),
                    lt: Arc::clone(lt),
                    shape: *shape,
                    layout,
                    plans: Mutex::new(HashMap::new()),
                    to_column_major: self.function(kernels::SCALE_LAYOUT_MODULE, kernels::SCALE_LAYOUT_SYMBOL, 0)?,
                };
                launch.with_plan(shape.padded_m(), |_| Ok(()))?;
                Box::new(launch)
            }
            GemmPath::Tuned(cfg) => Box::new(self.kernel_launch(shape, cfg.clone())?),
            GemmPath::KernelDefault => Box::new(self.kernel_launch(shape, kernels::heuristic_config(shape, self.device.compute_units))?),
        })
    }

    /// cuBLASLt reads the weight scales with the K-block count padded to a multiple of 4.
    unsafe fn vendor_weight_scales(&self, stream: &Stream, scales: u64, n_blocks: usize, k_blocks: usize) -> Result<Option<RawBuffer>> {
        if self.lt.is_err() {
            return Ok(None);
        }
        let l4 = k_blocks.div_ceil(4) * 4;
        let out = self.alloc(4 * n_blocks * l4)?;
        device_mem::copy_rows(&self.gpu, stream, out.addr(), 4 * l4, scales, 4 * k_blocks, 4 * k_blocks, n_blocks)?;
        Ok(Some(out))
    }

    unsafe fn enqueue_quantize_tokens(&self, stream: &Stream, a: &QuantTokensArgs) -> Result<()> {
        if a.format != Fp8Format::E4m3fn {
            return Err(Error::invalid("quantize_tokens", format!("{:?}: NVIDIA GPUs use e4m3fn", a.format)));
        }
        self.quant_tokens_on(stream.raw() as sys::CUstream, a.x, a.input, a.m, a.k, a.q, a.s, a.layout, a.fp8_max, a.ue8m0)
    }

    unsafe fn enqueue_quantize_weight(&self, stream: &Stream, a: &QuantWeightArgs) -> Result<()> {
        if a.format != Fp8Format::E4m3fn {
            return Err(Error::invalid("quantize_weight", format!("{:?}: NVIDIA GPUs use e4m3fn", a.format)));
        }
        let (nb, kb) = (a.n.div_ceil(128), a.k.div_ceil(128));
        let f = self.function(kernels::WEIGHT_QUANT_MODULE, kernels::weight_quant_symbol(a.input), 0)?;
        let (ni, ki, max) = (a.n as i32, a.k as i32, 448.0f32);
        let mut args = [arg(&a.w), arg(&a.q), arg(&a.s), arg(&ni), arg(&ki), arg(&max)];
        // SAFETY: matches sm90_quant_weight_blocks_*'s parameters; buffers sized by the caller.
        self.gpu.launch_on(&f, (kb as u32, nb as u32, 1), (256, 1, 1), 0, stream.raw() as sys::CUstream, &mut args)
    }

    unsafe fn enqueue_convert_to_fnuz(&self, _stream: &Stream, _q: u64, _bytes: usize, _s: u64, _scales: usize) -> Result<()> {
        Err(Error::Unsupported { path: "cuda e4m3fn -> e4m3fnuz".into(), reason: "NVIDIA GPUs compute in e4m3fn; the fnuz conversion is for gfx942".into() })
    }

    fn time_passes(&self, stream: &Stream, copies: usize, opts: &TimingOptions, pass: &dyn Fn(usize) -> Result<()>) -> Result<Vec<f64>> {
        device_mem::time_passes(&self.gpu, stream, copies, opts, pass)
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
        cfg.with_split_k(kernels::split_k(cfg, shape, self.device.compute_units))
    }
    fn split_alternatives(&self, cfg: &KernelConfig, shape: &GemmShape) -> Vec<u32> {
        kernels::split_alternatives(cfg, shape, self.device.compute_units)
    }
}
