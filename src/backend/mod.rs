//! One trait every backend implements; the public ops call only this.
//! `cpu` is always present; `hip` (feature `rocm`) and `cuda` (feature `cuda`) are whole
//! submodules gated by their feature.

use std::sync::Arc;

use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::gemm::{GemmPath, GemmProblem, GemmShape, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, TokenQuantOptions};

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "rocm")]
pub mod hip;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BackendKind {
    Cpu,
    Cuda,
    Rocm,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
            BackendKind::Rocm => "rocm",
        }
    }
    /// Whether this build has the backend compiled in.
    pub fn compiled(self) -> bool {
        match self {
            BackendKind::Cpu => true,
            BackendKind::Cuda => cfg!(feature = "cuda"),
            BackendKind::Rocm => cfg!(feature = "rocm"),
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" => Ok(BackendKind::Cuda),
            "rocm" | "hip" => Ok(BackendKind::Rocm),
            _ => Err(Error::invalid("backend", format!("{s:?} (expected cpu, cuda or rocm)"))),
        }
    }
}

/// How a benchmark or the tuner times a path.
#[derive(Clone, Debug)]
pub struct TimingOptions {
    pub warmup: usize,
    pub repeats: usize,
    /// Rotate over enough input copies that this many bytes exceed the last-level cache.
    pub rotate_bytes: usize,
    pub launches: Launches,
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

pub trait Backend: Send + Sync {
    fn kind(&self) -> BackendKind;
    fn device(&self) -> &Device;

    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens>;
    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight>;

    /// Whether `path` can run `shape` here; the reason when it cannot.
    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String>;

    /// Runs an already validated problem along `path`.
    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output>;

    /// Per-repeat seconds of `path` on `p`, inputs resident where the backend computes.
    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>>;

    /// Per-repeat seconds of a dense bf16 x bf16 -> bf16 vendor GEMM (fp32 compute) of the
    /// dequantized inputs of `p` (A[m, k] * As and B[n, k] * Bs rounded to bf16 on the host;
    /// only the GEMM is timed, over rotating copies), and its output (row-major [M, N]) for
    /// accuracy checks. The benchmark's "what fp8 saves" baseline; the output is bf16 whatever
    /// `p.shape.out_dtype` says. `Error::Unsupported` where the backend has no such GEMM.
    fn time_bf16_vendor_gemm(&self, p: &GemmProblem, opts: &TimingOptions) -> Result<(Vec<f64>, Output)> {
        let _ = (p, opts);
        Err(Error::Unsupported { path: "bf16 vendor GEMM".into(), reason: format!("no bf16 vendor GEMM on the {} backend", self.kind().name()) })
    }

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
}

/// Opens device `ordinal` of backend `kind`.
pub fn open(kind: BackendKind, ordinal: usize) -> Result<Arc<dyn Backend>> {
    match kind {
        BackendKind::Cpu => Ok(Arc::new(cpu::CpuBackend::new())),
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => Ok(Arc::new(cuda::CudaBackend::new(ordinal)?)),
        #[cfg(feature = "rocm")]
        BackendKind::Rocm => Ok(Arc::new(hip::HipBackend::new(ordinal)?)),
        #[allow(unreachable_patterns)]
        other => {
            let _ = ordinal;
            Err(Error::BackendUnavailable {
                backend: other.name(),
                reason: format!("not compiled in; rebuild with `--features {}`", other.name()),
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
