//! A product on host memory (the borrowed inputs of the host API and the reference), its
//! typed output, and the accuracy measure. Value types: they import only `types`.

use half::{bf16, f16};

use crate::error::{Error, Result};
use crate::types::{GemmShape, ScaleLayout};
pub use crate::types::OutDtype;

/// Activation scales and their layout (see [`ScaleLayout`]).
#[derive(Clone, Copy, Debug)]
pub struct ActScales<'a> {
    pub data: &'a [f32],
    pub layout: ScaleLayout,
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

