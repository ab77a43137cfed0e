//! Value types every layer shares: backend kinds, device identities, dtypes, scale layouts,
//! GEMM shapes and paths. A leaf: it imports only the error, format and config value types.
#![warn(missing_docs)]

use crate::config::KernelConfig;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
/// The kinds of backend a build can have.
pub enum BackendKind {
    /// The CPU reference (always present).
    Cpu,
    /// NVIDIA GPUs through the CUDA driver (feature `cuda`).
    Cuda,
    /// AMD GPUs through the HIP runtime (feature `rocm`).
    Rocm,
    /// The HIP backend's code path on the CPU: host memory as device memory, launches run
    /// the same `hip/*.hip` sources under the crate's wavefront emulation (feature `rocm`).
    HipEmulator,
}

impl BackendKind {
    /// The name the CLI and logs use (`cpu`, `cuda`, `rocm`, `hip-emu`).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
            BackendKind::Rocm => "rocm",
            BackendKind::HipEmulator => "hip-emu",
        }
    }
    /// Whether this build has the backend compiled in.
    pub fn compiled(self) -> bool {
        match self {
            BackendKind::Cpu => true,
            BackendKind::Cuda => cfg!(feature = "cuda"),
            BackendKind::Rocm | BackendKind::HipEmulator => cfg!(feature = "rocm"),
        }
    }
    /// Whether the backend computes in AMD's formats and names devices as AMD does.
    pub fn is_amd(self) -> bool {
        matches!(self, BackendKind::Rocm | BackendKind::HipEmulator)
    }
}

impl std::str::FromStr for BackendKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" => Ok(BackendKind::Cuda),
            "rocm" | "hip" => Ok(BackendKind::Rocm),
            "hip-emu" => Ok(BackendKind::HipEmulator),
            _ => Err(Error::invalid("backend", format!("{s:?} (expected cpu, cuda, rocm or hip-emu)"))),
        }
    }
}


/// Which device a buffer, stream or plan belongs to. Compared on every enqueue (O(1)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceId {
    /// Which backend.
    pub backend: BackendKind,
    /// The device's index within its backend.
    pub ordinal: usize,
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.backend.name(), self.ordinal)
    }
}

/// Element types of device buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// fp8 bit patterns (either flavour) or raw bytes.
    U8,
    /// f32.
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
}

impl ElemType {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            ElemType::U8 => 1,
            ElemType::Bf16 | ElemType::F16 => 2,
            ElemType::F32 => 4,
        }
    }
    /// The short name (`u8`, `f32`, `bf16`, `f16`).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::F32 => "f32",
            ElemType::Bf16 => "bf16",
            ElemType::F16 => "f16",
        }
    }
}

/// Input dtypes the quantization kernels read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputDtype {
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
    /// f32.
    F32,
}

impl InputDtype {
    /// The element type of a buffer holding this dtype.
    pub fn elem(self) -> ElemType {
        match self {
            InputDtype::Bf16 => ElemType::Bf16,
            InputDtype::F16 => ElemType::F16,
            InputDtype::F32 => ElemType::F32,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
/// The dtypes a product can be written in.
pub enum OutDtype {
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
    /// f32.
    F32,
}

impl OutDtype {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            OutDtype::F32 => 4,
            _ => 2,
        }
    }
    /// The short name (`bf16`, `f16`, `f32`).
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

impl OutDtype {
    /// The element type of a buffer holding this dtype.
    pub fn elem(self) -> ElemType {
        match self {
            OutDtype::Bf16 => ElemType::Bf16,
            OutDtype::F16 => ElemType::F16,
            OutDtype::F32 => ElemType::F32,
        }
    }
}

/// Where activation scales live. `ColumnMajor` is M-major (scale of row m, group g at
/// `g * padded_m + m`) with `padded_m` = M rounded up to a multiple of 4 (TMA-aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ScaleLayout {
    #[default]
    /// [M, ceil(K/128)]: the scales of one row are contiguous.
    RowMajor,
    /// [ceil(K/128), round_up(M, 4)]: the scales of one K block are contiguous (TMA-aligned).
    ColumnMajor,
}

impl ScaleLayout {
    /// Rows a column-major scale array holds: M rounded up to a multiple of 4 (TMA-aligned).
    pub fn padded_rows(m: usize) -> usize {
        m.div_ceil(4) * 4
    }

    /// How many scale values M rows of `groups` K groups take in this layout.
    pub fn scale_count(self, m: usize, groups: usize) -> usize {
        match self {
            ScaleLayout::RowMajor => m * groups,
            ScaleLayout::ColumnMajor => Self::padded_rows(m) * groups,
        }
    }

    /// (stride from one row to the next, stride from one group to the next), in elements.
    pub fn strides(self, m: usize, groups: usize) -> (usize, usize) {
        match self {
            ScaleLayout::RowMajor => (groups, 1),
            ScaleLayout::ColumnMajor => (1, Self::padded_rows(m)),
        }
    }
}

/// The sizes that decide the path; no data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmShape {
    /// Rows of A and C (tokens).
    pub m: usize,
    /// Columns of C (weight rows).
    pub n: usize,
    /// The reduction length.
    pub k: usize,
    /// Weight block (block_n, block_k); activations use groups of block_k.
    pub block: (usize, usize),
    /// The fp8 flavour of A and B.
    pub format: Fp8Format,
    /// The dtype C is written in.
    pub out_dtype: OutDtype,
}

impl GemmShape {
    /// K blocks of the scales: ceil(K / block_k).
    pub fn k_blocks(&self) -> usize {
        self.k.div_ceil(self.block.1)
    }
    /// N blocks of the weight scales: ceil(N / block_n).
    pub fn n_blocks(&self) -> usize {
        self.n.div_ceil(self.block.0)
    }
    /// Rows of column-major activation scales: M rounded up to a multiple of 4.
    pub fn padded_m(&self) -> usize {
        ScaleLayout::padded_rows(self.m)
    }
    /// The size rules every product obeys, checked before any buffer of it exists: M, N, K
    /// and the block sides >= 1, and A, B and C within the GPU kernels' 32-bit indexing
    /// (at most 2^31-1 elements each, no overflow on the way).
    pub fn check_size(&self, op: &'static str) -> Result<()> {
        if self.m == 0 || self.n == 0 || self.k == 0 {
            return Err(Error::shape(op, format!("M, N and K must be >= 1, got M={} N={} K={}", self.m, self.n, self.k)));
        }
        if self.block.0 == 0 || self.block.1 == 0 {
            return Err(Error::invalid(op, format!("block shape {:?} has a zero side", self.block)));
        }
        let limit = i32::MAX as usize;
        for (what, elems) in [("A", self.m.checked_mul(self.k)), ("B", self.n.checked_mul(self.k)), ("C", self.m.checked_mul(self.n))] {
            match elems {
                Some(e) if e <= limit => {}
                _ => return Err(Error::shape(op, format!("{what} has more than 2^31-1 elements (M={} N={} K={})", self.m, self.n, self.k))),
            }
        }
        Ok(())
    }
    /// Floating-point operations of the product (2 M N K).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    /// Bytes a kernel must move at least: A, B (fp8), scales ignored, C written once.
    pub fn min_bytes(&self) -> f64 {
        (self.m * self.k + self.n * self.k + self.out_dtype.bytes() * self.m * self.n) as f64
    }
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
    /// A short description for logs and tables.
    pub fn label(&self) -> String {
        match self {
            GemmPath::Tuned(c) => format!("tuned {}", c.short()),
            GemmPath::Vendor => "vendor".into(),
            GemmPath::KernelDefault => "kernel default".into(),
        }
    }
}

