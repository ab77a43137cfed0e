//! One trait every backend implements: the compute primitives of a device (memory, streams,
//! resolved launches, quantization kernels) and the kernel configs it can run; the device API
//! (`Context`, `GemmPlan`) and the host-slice conveniences (`HostOps`) are built on it.
//! `cpu` is always present; `hip` (feature `rocm`: real AMD GPUs and the emulated device) and
//! `cuda` (feature `cuda`) are whole submodules gated by their feature.

use std::sync::Arc;

use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::memory::RawBuffer;
use crate::problem::{GemmProblem, Output};
use crate::stream::Stream;
pub use crate::types::BackendKind;
use crate::types::{DeviceId, GemmPath, GemmShape, InputDtype, ScaleLayout};

pub mod cpu;
mod host_ops;
pub use host_ops::HostOps;
pub(crate) use host_ops::check_quant_options;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "rocm")]
pub mod hip;

/// How a benchmark or the tuner times a path.
#[derive(Clone, Debug)]
pub struct TimingOptions {
    pub warmup: usize,
    pub repeats: usize,
    /// Rotate over enough input copies that this many bytes exceed the last-level cache.
    pub rotate_bytes: usize,
    pub launches: Launches,
}

impl TimingOptions {
    /// Input copies a timed pass rotates over on a GPU: enough to exceed `rotate_bytes`, and at
    /// least 4, so that one allocation's placement weighs less in the figure (on the H200 the
    /// same kernel over two copies of 132 MB weights timed 0.98-1.09x apart from one process to
    /// the next); one when no rotation is asked for (`rotate_bytes` 0).
    pub fn copies(&self, set_bytes: usize, max: usize) -> usize {
        if self.rotate_bytes == 0 {
            return 1;
        }
        self.rotate_bytes.div_ceil(set_bytes.max(1)).clamp(4, max.max(4))
    }
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions { warmup: 3, repeats: 15, rotate_bytes: 256 << 20, launches: Launches::Graph }
    }
}

/// How a timed pass over the rotating copies is issued on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Launches {
    /// Captured once into a graph and replayed (the anchors' method; no host launch cost
    /// between kernels). Backends that cannot capture launch eagerly and say so.
    #[default]
    Graph,
    /// One host launch per kernel.
    Eager,
}

impl std::str::FromStr for Launches {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "graph" => Ok(Launches::Graph),
            "eager" => Ok(Launches::Eager),
            _ => Err(Error::invalid("launches", format!("{s:?} (expected graph or eager)"))),
        }
    }
}

/// One product's device addresses and sizes, checked by [`GemmPlan::enqueue`](crate::GemmPlan::enqueue)
/// (lengths, alignment, device) before a backend sees them.
#[derive(Clone, Copy, Debug)]
pub struct GemmLaunchArgs {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// fp8 [M, K] row-major.
    pub a: u64,
    pub a_scales: u64,
    /// (row stride, K-block stride) of the activation scales, in elements.
    pub a_scale_strides: (usize, usize),
    pub a_layout: ScaleLayout,
    /// fp8 [N, K] row-major.
    pub b: u64,
    /// [ceil(N/128), ceil(K/128)] row-major.
    pub b_scales: u64,
    /// The weight scales in the vendor BLAS's layout, where the backend asked for one (0 otherwise).
    pub b_scales_vendor: u64,
    /// [M, N] row-major in the plan's output dtype.
    pub c: u64,
    /// The plan's workspace (`workspace_bytes` for the largest M it was sized for).
    pub workspace: u64,
    pub workspace_bytes: usize,
}

/// A path resolved to what it launches: kernel handle, grid rule, K split, vendor plan.
/// Built once by [`Backend::resolve_gemm`]; `enqueue` then only computes the grid for M.
pub trait GemmLaunch: Send + Sync {
    /// What runs, for logs ("cuda kernel 128x128x128 w8 s4", "cuBLASLt", ...).
    fn describe(&self) -> String;
    /// Device workspace this launch needs for `m` rows.
    fn workspace_bytes(&self, m: usize) -> usize;
    /// The most workspace any M up to `max_m` needs (what a plan allocates up front). The
    /// default scans every M (a K split, and so a workspace, can apply to small M only); a
    /// launch whose need grows with M returns `workspace_bytes(max_m)`.
    fn workspace_bound(&self, max_m: usize) -> usize {
        const SCAN: usize = 1 << 16;
        (1..=max_m.min(SCAN)).chain(std::iter::once(max_m)).map(|m| self.workspace_bytes(m)).max().unwrap_or(0)
    }
    /// Enqueues the product on `stream` without waiting for it.
    ///
    /// # Safety
    /// Every address in `args` must be live memory of this backend's device, sized for the
    /// shape and aligned as [`Backend::alignment`] says, until the stream has run the work;
    /// the workspace must be at least `workspace_bytes(args.m)` and used by nothing else
    /// meanwhile.
    unsafe fn enqueue(&self, stream: &Stream, args: &GemmLaunchArgs) -> Result<()>;
}

/// Token quantization on the device: x [M, K] (bf16/f16/f32) -> q fp8 [M, K] and scales.
#[derive(Clone, Copy, Debug)]
pub struct QuantTokensArgs {
    pub x: u64,
    pub input: InputDtype,
    pub m: usize,
    pub k: usize,
    pub q: u64,
    pub s: u64,
    /// Group width along K (the GPU kernels take 128 only).
    pub group: usize,
    pub layout: ScaleLayout,
    pub format: Fp8Format,
    /// The fp8 value a group's amax maps to (already resolved from the options).
    pub fp8_max: f32,
    pub ue8m0: bool,
}

/// Weight quantization on the device: w [N, K] (bf16/f16/f32) -> q fp8 [N, K] and one scale per
/// 128x128 block.
#[derive(Clone, Copy, Debug)]
pub struct QuantWeightArgs {
    pub w: u64,
    pub input: InputDtype,
    pub n: usize,
    pub k: usize,
    pub q: u64,
    pub s: u64,
    pub format: Fp8Format,
}

/// What a backend computes with: device memory, streams, the kernels' launch sequences and the
/// kernel configs it can run. Timing has its own primitive (`time_passes`) that benches and the
/// tuner build on through the same launches users run; the host-slice conveniences are in
/// [`HostOps`].
pub trait Backend: Send + Sync {
    fn kind(&self) -> BackendKind;
    fn device(&self) -> &Device;
    /// The identity buffers, streams and plans of this backend carry.
    fn id(&self) -> DeviceId {
        DeviceId { backend: self.kind(), ordinal: self.device().ordinal }
    }
    /// Byte alignment every device address passed to a kernel must have.
    fn alignment(&self) -> usize {
        16
    }

    /// `bytes` of zeroed device memory.
    fn alloc(&self, bytes: usize) -> Result<RawBuffer>;
    /// A new stream of this device, owned by the crate.
    fn new_stream(&self) -> Result<Stream>;
    /// Whether `raw` is a stream handle of this device, where the runtime can tell.
    fn check_raw_stream(&self, raw: u64) -> Result<()>;
    /// Whether `bytes` at `addr` are memory of this device, where the runtime can tell.
    fn check_raw_memory(&self, addr: u64, bytes: usize) -> Result<()>;
    /// Enqueues a copy of `src` to device address `dst`; `src` may be reused on return.
    ///
    /// # Safety
    /// `dst` must address `src.len()` writable bytes of this device.
    unsafe fn copy_to_device(&self, stream: &Stream, dst: u64, src: &[u8]) -> Result<()>;
    /// Copies `dst.len()` bytes at device address `src` into `dst`, after the work before it on
    /// `stream` (this waits for the stream).
    ///
    /// # Safety
    /// `src` must address `dst.len()` readable bytes of this device.
    unsafe fn copy_to_host(&self, stream: &Stream, src: u64, dst: &mut [u8]) -> Result<()>;
    /// Enqueues a device-to-device copy.
    ///
    /// # Safety
    /// Both ranges must be memory of this device of `bytes` bytes.
    unsafe fn copy_on_device(&self, stream: &Stream, dst: u64, src: u64, bytes: usize) -> Result<()>;
    /// Waits for everything enqueued on `stream`.
    fn synchronize(&self, stream: &Stream) -> Result<()>;

    /// Whether `path` can run `shape` here; the reason when it cannot.
    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String>;
    /// Resolves `path` for products of `shape`'s N, K, block, format and output, activation
    /// scales in `layout`, up to `shape.m` rows.
    fn resolve_gemm(&self, shape: &GemmShape, path: &GemmPath, layout: ScaleLayout) -> Result<Box<dyn GemmLaunch>>;
    /// The weight scales in the vendor BLAS's own layout, where its path needs one (cuBLASLt
    /// pads the K-block count to a multiple of 4): `None` where the plain layout serves.
    ///
    /// # Safety
    /// `scales` must address `n_blocks * k_blocks` f32 of this device.
    unsafe fn vendor_weight_scales(&self, stream: &Stream, scales: u64, n_blocks: usize, k_blocks: usize) -> Result<Option<RawBuffer>> {
        let _ = (stream, scales, n_blocks, k_blocks);
        Ok(None)
    }
    /// Enqueues token quantization.
    ///
    /// # Safety
    /// Addresses live and sized for the arguments (q: M*K bytes; s: the layout's scale count).
    unsafe fn enqueue_quantize_tokens(&self, stream: &Stream, args: &QuantTokensArgs) -> Result<()>;
    /// Enqueues 128x128 block weight quantization.
    ///
    /// # Safety
    /// Addresses live and sized for the arguments.
    unsafe fn enqueue_quantize_weight(&self, stream: &Stream, args: &QuantWeightArgs) -> Result<()>;
    /// Enqueues the in-place OCP e4m3fn -> e4m3fnuz conversion of a quantized weight
    /// (0x80 -> 0x00, scales x2).
    ///
    /// # Safety
    /// `q` must address `bytes` bytes and `s` `scales` f32 of this device.
    unsafe fn enqueue_convert_to_fnuz(&self, stream: &Stream, q: u64, bytes: usize, s: u64, scales: usize) -> Result<()>;

    /// The kernel configs this build can launch (the tuner's candidates).
    fn candidate_configs(&self) -> Vec<KernelConfig>;
    /// The kernel's default config.
    fn default_config(&self) -> KernelConfig;
    /// The config the `KernelDefault` path runs on `shape` (a backend may pick per shape).
    fn default_config_for(&self, shape: &GemmShape) -> KernelConfig {
        let _ = shape;
        self.default_config()
    }
    /// `cfg` with the launch choices this backend makes by rule for `shape` written out (the
    /// CUDA backend: the K split), so that a tuned entry keeps running what was timed when a
    /// rule changes later. The tuner writes it into files meant for this crate.
    fn pinned_config(&self, cfg: &KernelConfig, shape: &GemmShape) -> KernelConfig {
        let _ = shape;
        cfg.clone()
    }
    /// K splits besides the one `pinned_config` writes out that the tuner should time for
    /// `cfg` on `shape`, each as a candidate of its own with that SPLIT_K (a rule's split is
    /// not always the fastest). None by default.
    fn split_alternatives(&self, cfg: &KernelConfig, shape: &GemmShape) -> Vec<u32> {
        let _ = (cfg, shape);
        Vec::new()
    }

    /// Seconds per pass for each of `opts.repeats` repeats, a pass being `pass(i)` for i in
    /// 0..copies (each enqueueing work on `stream`), after `opts.warmup` passes. This
    /// default times on the host around a synchronize; GPU backends use device events (and
    /// CUDA graph replay for `Launches::Graph`).
    fn time_passes(&self, stream: &Stream, copies: usize, opts: &TimingOptions, pass: &dyn Fn(usize) -> Result<()>) -> Result<Vec<f64>> {
        let _ = opts.launches; // host backends run work as it is enqueued; nothing to capture
        for w in 0..opts.warmup {
            pass(w % copies.max(1))?;
        }
        self.synchronize(stream)?;
        let mut out = Vec::with_capacity(opts.repeats);
        for _ in 0..opts.repeats.max(1) {
            let start = std::time::Instant::now();
            for i in 0..copies.max(1) {
                pass(i)?;
            }
            self.synchronize(stream)?;
            out.push(start.elapsed().as_secs_f64() / copies.max(1) as f64);
        }
        Ok(out)
    }

    /// Per-repeat seconds of a dense bf16 x bf16 -> bf16 vendor GEMM (fp32 compute) of the
    /// dequantized inputs of `p` (A[m, k] * As and B[n, k] * Bs rounded to bf16 on the host;
    /// only the GEMM is timed, over rotating copies), and its output (row-major [M, N]) for
    /// accuracy checks. The benchmark's "what fp8 saves" baseline; the output is bf16 whatever
    /// `p.shape.out_dtype` says. `Error::Unsupported` where the backend has no such GEMM.
    fn time_bf16_vendor_gemm(&self, p: &GemmProblem, opts: &TimingOptions) -> Result<(Vec<f64>, Output)> {
        let _ = (p, opts);
        Err(Error::Unsupported { path: "bf16 vendor GEMM".into(), reason: format!("no bf16 vendor GEMM on the {} backend", self.kind().name()) })
    }
}

/// Opens device `ordinal` of backend `kind`.
pub fn open(kind: BackendKind, ordinal: usize) -> Result<Arc<dyn Backend>> {
    match kind {
        BackendKind::Cpu => Ok(Arc::new(cpu::CpuBackend::new())),
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => Ok(Arc::new(cuda::CudaBackend::new(ordinal)?)),
        #[cfg(feature = "rocm")]
        BackendKind::Rocm => Ok(Arc::new(hip::HipBackend::new(ordinal)?)),
        #[cfg(feature = "rocm")]
        BackendKind::HipEmulator => Ok(Arc::new(hip::EmulatedHip::new(ordinal)?)),
        #[allow(unreachable_patterns)]
        other => {
            let _ = ordinal;
            Err(Error::BackendUnavailable {
                backend: other.name(),
                reason: format!("not compiled in; rebuild with `--features {}`", if other.is_amd() { "rocm" } else { other.name() }),
            })
        }
    }
}

/// Devices of every compiled-in backend (the CPU always last).
#[allow(clippy::vec_init_then_push)] // the pushes before the CPU one are feature-gated
pub fn devices() -> Vec<Device> {
    #[allow(unused_mut)]
    let mut out = Vec::new();
    #[cfg(feature = "rocm")]
    out.extend(hip::devices());
    #[cfg(feature = "cuda")]
    out.extend(cuda::devices());
    out.push(cpu::CpuBackend::new().device().clone());
    out
}

/// The best backend present: ROCm, then CUDA, then the CPU.
pub fn best_available() -> Arc<dyn Backend> {
    for kind in [BackendKind::Rocm, BackendKind::Cuda] {
        if kind.compiled() {
            match open(kind, 0) {
                Ok(b) => return b,
                Err(e) => log::info!("{} backend not used: {e}", kind.name()),
            }
        }
    }
    Arc::new(cpu::CpuBackend::new())
}
