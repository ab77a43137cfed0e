//! The public operation: C[M,N] = (A, As) x (B, Bs)^T with 1 x block_k activation scales
//! and block_n x block_k weight scales. Shapes and scales are checked here, once, for
//! every backend; the path (tuned kernel, vendor BLAS, kernel default) is chosen here, once
//! per (device, N, K, M-entry), and the reason is logged once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use half::{bf16, f16};

use crate::backend::Backend;
use crate::config::{KernelConfig, Library};
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::quant::ScaleLayout;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutDtype {
    Bf16,
    F16,
    F32,
}

impl OutDtype {
    pub fn bytes(self) -> usize {
        match self {
            OutDtype::F32 => 4,
            _ => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            OutDtype::Bf16 => "bf16",
            OutDtype::F16 => "f16",
            OutDtype::F32 => "f32",
        }
    }
}

impl std::str::FromStr for OutDtype {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "bf16" => Ok(OutDtype::Bf16),
            "f16" | "fp16" => Ok(OutDtype::F16),
            "f32" | "fp32" => Ok(OutDtype::F32),
            _ => Err(Error::invalid("gemm", format!("output dtype {s:?} (expected bf16, f16 or f32)"))),
        }
    }
}

/// Activation scales and their layout (see [`ScaleLayout`]).
#[derive(Clone, Copy, Debug)]
pub struct ActScales<'a> {
    pub data: &'a [f32],
    pub layout: ScaleLayout,
}

/// The sizes that decide the path; no data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmShape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Weight block (block_n, block_k); activations use groups of block_k.
    pub block: (usize, usize),
    pub format: Fp8Format,
    pub out_dtype: OutDtype,
}

impl GemmShape {
    pub fn k_blocks(&self) -> usize {
        self.k.div_ceil(self.block.1)
    }
    pub fn n_blocks(&self) -> usize {
        self.n.div_ceil(self.block.0)
    }
    /// Rows of column-major activation scales: M rounded up to a multiple of 4.
    pub fn padded_m(&self) -> usize {
        ScaleLayout::padded_rows(self.m)
    }
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    /// The size rules every product obeys, checked before any buffer of it exists: M, N, K
    /// and the block sides >= 1, and A, B and C within the GPU kernels' 32-bit indexing
    /// (at most 2^31-1 elements each, no overflow on the way).
    pub fn check_size(&self, op: &'static str) -> Result<()> {
        let s = self;
        if s.m == 0 || s.n == 0 || s.k == 0 {
            return Err(Error::shape(op, format!("M, N and K must be >= 1, got M={} N={} K={}", s.m, s.n, s.k)));
        }
        if s.block.0 == 0 || s.block.1 == 0 {
            return Err(Error::invalid(op, format!("block shape {:?} has a zero side", s.block)));
        }
        let limit = i32::MAX as usize;
        for (what, elems) in [("A", s.m.checked_mul(s.k)), ("B", s.n.checked_mul(s.k)), ("C", s.m.checked_mul(s.n))] {
            match elems {
                Some(e) if e <= limit => {}
                _ => return Err(Error::shape(op, format!("{what} has more than 2^31-1 elements (M={} N={} K={})", s.m, s.n, s.k))),
            }
        }
        Ok(())
    }
    /// Bytes a kernel must move at least: A, B (fp8), scales ignored, C written once.
    pub fn min_bytes(&self) -> f64 {
        (self.m * self.k + self.n * self.k + self.out_dtype.bytes() * self.m * self.n) as f64
    }
}

/// One product, borrowed from the caller's host buffers.
#[derive(Clone, Copy, Debug)]
pub struct GemmProblem<'a> {
    pub shape: GemmShape,
    /// fp8 bit patterns, row-major [M, K].
    pub a: &'a [u8],
    pub a_scales: ActScales<'a>,
    /// fp8 bit patterns, row-major [N, K] (PyTorch Linear layout).
    pub b: &'a [u8],
    /// Row-major [ceil(N/block_n), ceil(K/block_k)].
    pub b_scales: &'a [f32],
}

impl<'a> GemmProblem<'a> {
    /// Expected length of the activation scales for this shape and layout.
    pub fn a_scales_len(shape: &GemmShape, layout: ScaleLayout) -> usize {
        layout.scale_count(shape.m, shape.k_blocks())
    }

    /// Activation scale of row `m`, K block `kb`.
    #[inline]
    pub fn a_scale(&self, m: usize, kb: usize) -> f32 {
        let (sm, sk) = self.a_scales.layout.strides(self.shape.m, self.shape.k_blocks());
        self.a_scales.data[m * sm + kb * sk]
    }

    /// Every check a backend relies on: sizes, lengths, 32-bit index limits, finite scales.
    pub fn validate(&self) -> Result<()> {
        const OP: &str = "gemm";
        let s = &self.shape;
        s.check_size(OP)?;
        if self.a.len() != s.m * s.k {
            return Err(Error::shape(OP, format!("A has {} bytes, expected M*K = {}*{} = {}", self.a.len(), s.m, s.k, s.m * s.k)));
        }
        if self.b.len() != s.n * s.k {
            return Err(Error::shape(OP, format!("B has {} bytes, expected N*K = {}*{} = {}", self.b.len(), s.n, s.k, s.n * s.k)));
        }
        let want_as = Self::a_scales_len(s, self.a_scales.layout);
        if self.a_scales.data.len() != want_as {
            return Err(Error::shape(
                OP,
                format!(
                    "activation scales have {} values, expected {} ({:?} layout, M={}, ceil(K/{})={})",
                    self.a_scales.data.len(),
                    want_as,
                    self.a_scales.layout,
                    s.m,
                    s.block.1,
                    s.k_blocks()
                ),
            ));
        }
        let want_bs = s.n_blocks() * s.k_blocks();
        if self.b_scales.len() != want_bs {
            return Err(Error::shape(
                OP,
                format!(
                    "weight scales have {} values, expected ceil(N/{})*ceil(K/{}) = {}*{} = {}",
                    self.b_scales.len(),
                    s.block.0,
                    s.block.1,
                    s.n_blocks(),
                    s.k_blocks(),
                    want_bs
                ),
            ));
        }
        if let Some(i) = self.a_scales.data.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { op: OP, what: format!("activation scale #{i} is {}", self.a_scales.data[i]) });
        }
        if let Some(i) = self.b_scales.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite { op: OP, what: format!("weight scale #{i} is {}", self.b_scales[i]) });
        }
        Ok(())
    }
}

/// The product, in the requested dtype, row-major [M, N].
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    Bf16(Vec<bf16>),
    F16(Vec<f16>),
    F32(Vec<f32>),
}

impl Output {
    /// Rounds an f32 result to `dtype` (round to nearest even).
    pub fn from_f32(dtype: OutDtype, v: Vec<f32>) -> Output {
        match dtype {
            OutDtype::F32 => Output::F32(v),
            OutDtype::Bf16 => Output::Bf16(v.into_iter().map(bf16::from_f32).collect()),
            OutDtype::F16 => Output::F16(v.into_iter().map(f16::from_f32).collect()),
        }
    }
    pub fn dtype(&self) -> OutDtype {
        match self {
            Output::Bf16(_) => OutDtype::Bf16,
            Output::F16(_) => OutDtype::F16,
            Output::F32(_) => OutDtype::F32,
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Output::Bf16(v) => v.len(),
            Output::F16(v) => v.len(),
            Output::F32(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Output::Bf16(v) => v.iter().map(|x| x.to_f64()).collect(),
            Output::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
            Output::F32(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }
}

/// DeepGEMM's accuracy measure: 1 - 2 sum(xy) / sum(x^2 + y^2), in f64.
pub fn calc_diff(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "calc_diff: lengths differ");
    let (mut xy, mut sq) = (0.0f64, 0.0f64);
    for (&a, &b) in x.iter().zip(y) {
        xy += a * b;
        sq += a * a + b * b;
    }
    if sq == 0.0 {
        return 0.0;
    }
    1.0 - 2.0 * xy / sq
}

/// Which implementation runs one product.
#[derive(Clone, Debug, PartialEq)]
pub enum GemmPath {
    /// The crate's kernel with a tuned config.
    Tuned(KernelConfig),
    /// rocBLAS (AMD) or cuBLASLt (NVIDIA).
    Vendor,
    /// The crate's kernel with its default config.
    KernelDefault,
}

impl GemmPath {
    pub fn label(&self) -> String {
        match self {
            GemmPath::Tuned(c) => format!("tuned {}", c.short()),
            GemmPath::Vendor => "vendor".into(),
            GemmPath::KernelDefault => "kernel default".into(),
        }
    }
}

/// Plans and runs products on one backend, with one config library.
pub struct BlockScaledGemm {
    backend: Arc<dyn Backend>,
    library: Arc<Library>,
    logged: Mutex<HashSet<String>>,
}

impl BlockScaledGemm {
    pub fn new(backend: Arc<dyn Backend>, library: Arc<Library>) -> Self {
        BlockScaledGemm { backend, library, logged: Mutex::new(HashSet::new()) }
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    fn log_once(&self, key: String, msg: impl FnOnce() -> String) {
        let mut seen = self.logged.lock().unwrap_or_else(|e| e.into_inner());
        if seen.insert(key) {
            log::info!("{}", msg());
        }
    }

    /// Tuned file entry -> its config (or the vendor path it records); no file -> vendor
    /// BLAS; vendor cannot serve -> kernel default.
    pub fn plan(&self, shape: &GemmShape) -> GemmPath {
        let dev = self.backend.device();
        let key = format!("{}:{}x{}", dev.config_name(), shape.n, shape.k);
        if let Some(table) = self.library.lookup(&dev.config_name(), shape.n, shape.k, "fp8_w8a8", shape.block) {
            if let Some((m_key, cfg)) = table.nearest(shape.m) {
                if cfg.prefers_vendor() {
                    if self.backend.supports(shape, &GemmPath::Vendor).is_ok() {
                        return GemmPath::Vendor;
                    }
                } else {
                    let path = GemmPath::Tuned(cfg.clone());
                    match self.backend.supports(shape, &path) {
                        Ok(()) => return path,
                        Err(why) => self.log_once(format!("{key}:{m_key}:tuned"), || {
                            format!("tuned config for N={} K={} M~{m_key} ({}) not usable: {why}; using the default path", shape.n, shape.k, cfg.short())
                        }),
                    }
                }
            }
        }
        match self.backend.supports(shape, &GemmPath::Vendor) {
            Ok(()) => {
                self.log_once(format!("{key}:vendor"), || format!("N={} K={}: no tuned config, using the vendor BLAS path", shape.n, shape.k));
                GemmPath::Vendor
            }
            Err(why) => {
                self.log_once(format!("{key}:default"), || format!("N={} K={}: no tuned config and vendor path unavailable ({why}); using the kernel's default config", shape.n, shape.k));
                GemmPath::KernelDefault
            }
        }
    }

    /// Validates, plans and runs.
    pub fn run(&self, p: &GemmProblem) -> Result<Output> {
        p.validate()?;
        if p.shape.format != self.backend.device().fp8 && self.backend.kind() != crate::BackendKind::Cpu {
            return Err(Error::invalid(
                "gemm",
                format!("inputs are {:?} but device {} computes in {:?}", p.shape.format, self.backend.device().name, self.backend.device().fp8),
            ));
        }
        let path = self.plan(&p.shape);
        self.backend.gemm(p, &path)
    }
}
