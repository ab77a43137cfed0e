//! CPU reference quantizers: per-token-group activations, per-block weights, and the
//! OCP e4m3fn -> e4m3fnuz checkpoint conversion of a quantized weight.
//!
//! Both quantizers follow DeepSeek-V3 / vLLM: s = max(amax, eps) / fp8_max with
//! eps = [`SCALE_EPS`], q = encode(x / s) (round to nearest even, saturating), value = q * s.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::formats::{convert_e4m3fn_to_fnuz, Fp8Format};

/// Floor on a group's amax, so that an all-zero group gets a tiny positive scale, not 0.
pub const SCALE_EPS: f32 = 1e-10;

/// Scale stored in the padding rows (M..padded_m) of column-major activation scales. Real
/// consumers never read them (DeepGEMM and vLLM leave them uninitialized); 0 keeps them
/// finite, so the problem passes `GemmProblem::validate`, and makes a kernel that wrongly
/// reads them produce zeros rather than plausible numbers.
pub const PADDING_SCALE: f32 = 0.0;

pub use crate::types::ScaleLayout;

#[derive(Clone, Debug)]
pub struct TokenQuantOptions {
    /// Group width along K (default 128).
    pub group: usize,
    pub format: Fp8Format,
    /// fp8 value the group amax maps to; `None` = `format.default_activation_max()`
    /// (448 for e4m3fn, 224 for e4m3fnuz). Must be in (0, format.max_finite()].
    pub fp8_max: Option<f32>,
    pub layout: ScaleLayout,
    /// Round scales up to a power of two (UE8M0).
    pub ue8m0: bool,
}

impl TokenQuantOptions {
    pub fn new(format: Fp8Format) -> Self {
        TokenQuantOptions { group: 128, format, fp8_max: None, layout: ScaleLayout::RowMajor, ue8m0: false }
    }
    /// The fp8 max actually used.
    pub fn effective_fp8_max(&self) -> f32 {
        self.fp8_max.unwrap_or_else(|| self.format.default_activation_max())
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
    /// Row-major: [M, ceil(K/group)]. Column-major: [ceil(K/group), round_up(M, 4)], the
    /// padding rows holding [`PADDING_SCALE`].
    pub scales: Vec<f32>,
}

impl QuantizedTokens {
    pub fn groups(&self) -> usize {
        self.k.div_ceil(self.group)
    }
    /// M rounded up to a multiple of 4.
    pub fn padded_m(&self) -> usize {
        ScaleLayout::padded_rows(self.m)
    }
    /// Scale of row `row`, group `g`, whatever the layout.
    pub fn scale(&self, row: usize, g: usize) -> f32 {
        let (sm, sg) = self.layout.strides(self.m, self.groups());
        self.scales[row * sm + g * sg]
    }
    /// q * s for every element, row-major [M, K].
    pub fn dequantize(&self) -> Vec<f32> {
        let table = self.format.decode_table();
        let mut out = vec![0.0f32; self.m * self.k];
        for (row, out_row) in out.chunks_mut(self.k.max(1)).enumerate().take(self.m) {
            for (col, o) in out_row.iter_mut().enumerate() {
                *o = table[self.q[row * self.k + col] as usize] * self.scale(row, col / self.group);
            }
        }
        out
    }
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

impl QuantizedWeight {
    pub fn k_blocks(&self) -> usize {
        self.k.div_ceil(self.block.1)
    }
    /// Scale of element (row, col).
    pub fn scale_of(&self, row: usize, col: usize) -> f32 {
        self.scales[(row / self.block.0) * self.k_blocks() + col / self.block.1]
    }
    /// q * s for every element, row-major [N, K].
    pub fn dequantize(&self) -> Vec<f32> {
        let table = self.format.decode_table();
        (0..self.n * self.k).map(|i| table[self.q[i] as usize] * self.scale_of(i / self.k, i % self.k)).collect()
    }
    /// Converts an e4m3fn weight in place to e4m3fnuz with identical dequantized values
    /// (byte 0x80 -> 0x00, scales x2; see [`convert_e4m3fn_to_fnuz`]). Errors if the weight
    /// is already fnuz or a scale would overflow.
    pub fn convert_to_fnuz(&mut self) -> Result<()> {
        if self.format != Fp8Format::E4m3fn {
            return Err(Error::invalid("convert_e4m3fn_to_fnuz", "the weight is already e4m3fnuz"));
        }
        convert_e4m3fn_to_fnuz(&mut self.q, &mut self.scales)?;
        self.format = Fp8Format::E4m3fnuz;
        Ok(())
    }
}

/// Rounds a positive finite scale up to a power of two: 2^ceil(log2 s) (UE8M0).
pub fn round_scale_ue8m0(s: f32) -> f32 {
    let bits = s.to_bits();
    let exp_field = (bits >> 23) & 0xFF;
    if bits & 0x7F_FFFF == 0 || exp_field == 0 {
        // Already a power of two; or subnormal (s >= 1e-10/448 never is): fall back to math.
        return if exp_field == 0 { 2f32.powf(s.log2().ceil()) } else { s };
    }
    f32::from_bits((exp_field + 1) << 23)
}

/// Index of the first NaN or infinity, scanning in parallel chunks (rayon's per-element
/// `position_first` is an order of magnitude slower than a plain loop).
fn first_non_finite(v: &[f32]) -> Option<usize> {
    const CHUNK: usize = 1 << 16;
    v.par_chunks(CHUNK).enumerate().find_map_first(|(ci, c)| c.iter().position(|x| !x.is_finite()).map(|i| ci * CHUNK + i))
}

fn checked_len(op: &'static str, rows: usize, cols: usize) -> Result<usize> {
    rows.checked_mul(cols).ok_or_else(|| Error::shape(op, format!("{rows} x {cols} elements overflow usize")))
}

/// Quantizes activations x [M, K] (row-major f32) in groups of `opts.group` consecutive
/// values of a row (the last group of a row may be partial), one fp32 scale per group.
///
/// Errors: `x.len() != M*K` -> Shape; group 0 or an fp8 max outside (0, format max] ->
/// InvalidArgument; a NaN or infinite input -> NonFinite naming its row and column.
pub fn quantize_per_token_group(x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
    const OP: &str = "quantize_per_token_group";
    if opts.group == 0 {
        return Err(Error::invalid(OP, "group size must be >= 1"));
    }
    let fp8_max = opts.effective_fp8_max();
    if !(fp8_max > 0.0 && fp8_max <= opts.format.max_finite()) {
        return Err(Error::invalid(OP, format!("fp8 max {fp8_max} must be in (0, {}] for {}", opts.format.max_finite(), opts.format)));
    }
    let want = checked_len(OP, m, k)?;
    if x.len() != want {
        return Err(Error::shape(OP, format!("input has {} values, expected M*K = {m}*{k} = {want}", x.len())));
    }
    if let Some(i) = first_non_finite(x) {
        return Err(Error::NonFinite { op: OP, what: format!("x[{}, {}] = {}", i / k, i % k, x[i]) });
    }

    let groups = k.div_ceil(opts.group);
    let mut q = vec![0u8; want];
    let mut row_scales = vec![0.0f32; m * groups];
    if want > 0 {
        q.par_chunks_mut(k).zip(row_scales.par_chunks_mut(groups)).zip(x.par_chunks(k)).for_each(|((q_row, s_row), x_row)| {
            for ((q_g, s), x_g) in q_row.chunks_mut(opts.group).zip(s_row.iter_mut()).zip(x_row.chunks(opts.group)) {
                let amax = x_g.iter().fold(0.0f32, |acc, v| acc.max(v.abs()));
                let mut scale = amax.max(SCALE_EPS) / fp8_max;
                if opts.ue8m0 {
                    scale = round_scale_ue8m0(scale);
                }
                for (qv, &xv) in q_g.iter_mut().zip(x_g) {
                    *qv = opts.format.encode(xv / scale);
                }
                *s = scale;
            }
        });
    }

    let scales = match opts.layout {
        ScaleLayout::RowMajor => row_scales,
        ScaleLayout::ColumnMajor => {
            let padded_m = ScaleLayout::padded_rows(m);
            let mut col = vec![PADDING_SCALE; groups * padded_m];
            for row in 0..m {
                for g in 0..groups {
                    col[g * padded_m + row] = row_scales[row * groups + g];
                }
            }
            col
        }
    };
    Ok(QuantizedTokens { m, k, group: opts.group, format: opts.format, layout: opts.layout, q, scales })
}

/// Quantizes a weight w [N, K] (row-major f32, PyTorch Linear layout) with one fp32 scale
/// per (block_n x block_k) block; edge blocks may be partial. The block amax maps to the
/// format's finite max (448 or 240).
///
/// Errors: a zero block side -> InvalidArgument; `w.len() != N*K` -> Shape; a NaN or
/// infinite value -> NonFinite naming its row and column.
pub fn quantize_weight_blocks(w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
    const OP: &str = "quantize_weight_blocks";
    let (bn, bk) = block;
    if bn == 0 || bk == 0 {
        return Err(Error::invalid(OP, format!("block shape {block:?} has a zero side")));
    }
    let want = checked_len(OP, n, k)?;
    if w.len() != want {
        return Err(Error::shape(OP, format!("weight has {} values, expected N*K = {n}*{k} = {want}", w.len())));
    }
    if let Some(i) = first_non_finite(w) {
        return Err(Error::NonFinite { op: OP, what: format!("w[{}, {}] = {}", i / k, i % k, w[i]) });
    }

    let (n_blocks, k_blocks) = (n.div_ceil(bn), k.div_ceil(bk));
    let fp8_max = format.max_finite();
    let mut q = vec![0u8; want];
    let mut scales = vec![0.0f32; n_blocks * k_blocks];
    if want > 0 {
        // One task per band of block_n rows: amax per K block over the band, then encode.
        q.par_chunks_mut(bn * k).zip(scales.par_chunks_mut(k_blocks)).zip(w.par_chunks(bn * k)).for_each(|((q_band, s_band), w_band)| {
            let mut amax = vec![0.0f32; k_blocks];
            for w_row in w_band.chunks(k) {
                for (a, w_blk) in amax.iter_mut().zip(w_row.chunks(bk)) {
                    *a = w_blk.iter().fold(*a, |acc, v| acc.max(v.abs()));
                }
            }
            for (s, a) in s_band.iter_mut().zip(&amax) {
                *s = a.max(SCALE_EPS) / fp8_max;
            }
            for (q_row, w_row) in q_band.chunks_mut(k).zip(w_band.chunks(k)) {
                for ((q_blk, w_blk), &s) in q_row.chunks_mut(bk).zip(w_row.chunks(bk)).zip(s_band.iter()) {
                    for (qv, &wv) in q_blk.iter_mut().zip(w_blk) {
                        *qv = format.encode(wv / s);
                    }
                }
            }
        });
    }
    Ok(QuantizedWeight { n, k, block, format, q, scales })
}
