//! CPU reference quantizers: per-token-group activations, per-block weights, and the
//! OCP e4m3fn -> e4m3fnuz checkpoint conversion.

use crate::{error::Result, formats::Fp8Format};

/// Where activation scales live. `ColumnMajor` is M-major (scale of row m, group g at
/// `g * padded_m + m`) with `padded_m` = M rounded up to a multiple of 4 (TMA-aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScaleLayout {
    #[default]
    RowMajor,
    ColumnMajor,
}

#[derive(Clone, Debug)]
pub struct TokenQuantOptions {
    /// Group width along K (default 128).
    pub group: usize,
    pub format: Fp8Format,
    /// fp8 value the group amax maps to; `None` = `format.default_activation_max()`.
    pub fp8_max: Option<f32>,
    pub layout: ScaleLayout,
    /// Round scales up to a power of two (UE8M0).
    pub ue8m0: bool,
}

impl TokenQuantOptions {
    pub fn new(format: Fp8Format) -> Self {
        TokenQuantOptions { group: 128, format, fp8_max: None, layout: ScaleLayout::RowMajor, ue8m0: false }
    }
}

/// fp8 activations [M, K] and their fp32 dequantizing scales.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedTokens {
    pub m: usize,
    pub k: usize,
    pub group: usize,
    pub format: Fp8Format,
    pub layout: ScaleLayout,
    /// fp8 bit patterns, row-major [M, K].
    pub q: Vec<u8>,
    /// Row-major: [M, ceil(K/group)]. Column-major: [ceil(K/group), round_up(M, 4)].
    pub scales: Vec<f32>,
}

/// fp8 weights [N, K] and one fp32 dequantizing scale per block.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedWeight {
    pub n: usize,
    pub k: usize,
    /// (block_n, block_k), default (128, 128).
    pub block: (usize, usize),
    pub format: Fp8Format,
    pub q: Vec<u8>,
    /// Row-major [ceil(N/block_n), ceil(K/block_k)].
    pub scales: Vec<f32>,
}

pub fn quantize_per_token_group(x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
    let _ = (x, m, k, opts);
    todo!("H1")
}

pub fn quantize_weight_blocks(w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
    let _ = (w, n, k, block, format);
    todo!("H1")
}
