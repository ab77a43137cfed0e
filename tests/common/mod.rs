//! Shared test helpers: seeded random data, quantized GEMM problems built with the crate's
//! CPU quantizers, and an independent float64 reference.
//!
//! Use from a test file with `mod common;`. Nothing here uses the crate's fp8 decoder: the
//! reference decodes bytes with its own sign/exponent/mantissa arithmetic, so a bug in
//! `blockfp8::formats` cannot hide itself.
#![allow(dead_code)]

use blockfp8::gemm::{calc_diff, ActScales, GemmProblem, GemmShape, OutDtype, Output};
use blockfp8::quant::{quantize_per_token_group, quantize_weight_blocks, ScaleLayout, TokenQuantOptions};
use blockfp8::Fp8Format;

/// SplitMix64: tiny, seedable, good enough statistics for test data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]: keeps ln finite
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }
}

/// Activation-like data [rows, cols]: normal values, a per-row magnitude spread over
/// 2^-6..2^6, and about 1% outliers 10..100x larger (as in real LLM activations).
pub fn random_activations(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(rows * cols);
    for _ in 0..rows {
        let row_scale = 2f64.powf(rng.range(-6.0, 6.0));
        for _ in 0..cols {
            let mut v = rng.normal() * row_scale;
            if rng.uniform() < 0.01 {
                v *= rng.range(10.0, 100.0);
            }
            out.push(v as f32);
        }
    }
    out
}

/// Weight-like data [rows, cols]: small normal values (std ~0.02) with a magnitude that
/// varies per 64-row band, plus rare outliers.
pub fn random_weights(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed.wrapping_add(0xA5A5));
    let mut band_scale = 0.02;
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        if r % 64 == 0 {
            band_scale = 0.02 * 2f64.powf(rng.range(-2.0, 2.0));
        }
        for _ in 0..cols {
            let mut v = rng.normal() * band_scale;
            if rng.uniform() < 0.002 {
                v *= rng.range(5.0, 30.0);
            }
            out.push(v as f32);
        }
    }
    out
}

/// A quantized product with owned buffers; `problem()` borrows them as a `GemmProblem`.
#[derive(Clone, Debug)]
pub struct QuantizedProblem {
    pub shape: GemmShape,
    /// The unquantized inputs the fp8 data came from.
    pub x: Vec<f32>,
    pub w: Vec<f32>,
    pub a: Vec<u8>,
    pub a_scales: Vec<f32>,
    pub a_layout: ScaleLayout,
    pub b: Vec<u8>,
    pub b_scales: Vec<f32>,
}

impl QuantizedProblem {
    pub fn problem(&self) -> GemmProblem<'_> {
        GemmProblem {
            shape: self.shape,
            a: &self.a,
            a_scales: ActScales { data: &self.a_scales, layout: self.a_layout },
            b: &self.b,
            b_scales: &self.b_scales,
        }
    }
    /// The same data with another output dtype.
    pub fn problem_with_out(&self, out: OutDtype) -> GemmProblem<'_> {
        let mut p = self.problem();
        p.shape.out_dtype = out;
        p
    }
}

/// Random activations [m, k] and weights [n, k], quantized with the crate's CPU quantizers
/// (block (128, 128), activation max = the flavour's default), f32 output.
pub fn random_quantized_problem(m: usize, n: usize, k: usize, format: Fp8Format, layout: ScaleLayout, seed: u64) -> QuantizedProblem {
    random_quantized_problem_with(m, n, k, format, layout, (128, 128), OutDtype::F32, seed)
}

/// As [`random_quantized_problem`], with any weight block and output dtype.
#[allow(clippy::too_many_arguments)]
pub fn random_quantized_problem_with(
    m: usize,
    n: usize,
    k: usize,
    format: Fp8Format,
    layout: ScaleLayout,
    block: (usize, usize),
    out_dtype: OutDtype,
    seed: u64,
) -> QuantizedProblem {
    let x = random_activations(m, k, seed);
    let w = random_weights(n, k, seed.wrapping_mul(31).wrapping_add(7));
    let mut opts = TokenQuantOptions::new(format);
    opts.group = block.1;
    opts.layout = layout;
    let qa = quantize_per_token_group(&x, m, k, &opts).expect("quantizing test activations");
    let qb = quantize_weight_blocks(&w, n, k, block, format).expect("quantizing test weights");
    QuantizedProblem {
        shape: GemmShape { m, n, k, block, format, out_dtype },
        x,
        w,
        a: qa.q,
        a_scales: qa.scales,
        a_layout: layout,
        b: qb.q,
        b_scales: qb.scales,
    }
}

/// Decodes one fp8 byte from its bit fields, independently of the crate (no tables).
/// NaN patterns give NaN.
pub fn decode_fp8_f64(format: Fp8Format, byte: u8) -> f64 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((byte >> 3) & 0x0F) as i32;
    let man = (byte & 0x07) as f64;
    let bias = match format {
        Fp8Format::E4m3fn => {
            if byte & 0x7F == 0x7F {
                return f64::NAN;
            }
            7
        }
        Fp8Format::E4m3fnuz => {
            if byte == 0x80 {
                return f64::NAN;
            }
            8
        }
    };
    if exp == 0 {
        sign * (man / 8.0) * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + man / 8.0) * 2f64.powi(exp - bias)
    }
}

/// C = (A, As) x (B, Bs)^T computed entirely in float64 from the decoded fp8 values and the
/// scales (the product of the dequantized inputs), row-major [M, N].
pub fn reference_gemm_f64(p: &GemmProblem) -> Vec<f64> {
    let s = p.shape;
    let (m, n, k) = (s.m, s.n, s.k);
    let (bn, bk) = s.block;
    let kb_count = k.div_ceil(bk);
    let lut: Vec<f64> = (0..=255u8).map(|b| decode_fp8_f64(s.format, b)).collect();
    let a: Vec<f64> = p.a.iter().map(|&b| lut[b as usize]).collect();
    let b: Vec<f64> = p.b.iter().map(|&x| lut[x as usize]).collect();
    let a_scale = |row: usize, kb: usize| -> f64 {
        (match p.a_scales.layout {
            ScaleLayout::RowMajor => p.a_scales.data[row * kb_count + kb],
            ScaleLayout::ColumnMajor => p.a_scales.data[kb * m.div_ceil(4) * 4 + row],
        }) as f64
    };
    let mut c = vec![0.0f64; m * n];
    // Rows are independent; split them over the available threads to keep big shapes quick.
    let threads = std::thread::available_parallelism().map(|t| t.get()).unwrap_or(1).min(m).max(1);
    let rows_per = m.div_ceil(threads);
    std::thread::scope(|scope| {
        for (chunk_idx, chunk) in c.chunks_mut(rows_per * n).enumerate() {
            let (a, b, a_scale) = (&a, &b, &a_scale);
            scope.spawn(move || {
                for (local, out_row) in chunk.chunks_mut(n).enumerate() {
                    let row = chunk_idx * rows_per + local;
                    let a_row = &a[row * k..(row + 1) * k];
                    for (col, out) in out_row.iter_mut().enumerate() {
                        let b_row = &b[col * k..(col + 1) * k];
                        let mut total = 0.0f64;
                        for kb in 0..kb_count {
                            let (k0, k1) = (kb * bk, ((kb + 1) * bk).min(k));
                            let dot: f64 = a_row[k0..k1].iter().zip(&b_row[k0..k1]).map(|(x, y)| x * y).sum();
                            total += a_scale(row, kb) * p.b_scales[(col / bn) * kb_count + kb] as f64 * dot;
                        }
                        *out = total;
                    }
                }
            });
        }
    });
    c
}

/// Asserts calc_diff(got, reference) < bound, with a message naming the case. Also checks
/// lengths, finiteness and that the reference is not all zeros (a zero reference would make
/// calc_diff meaningless).
pub fn assert_calc_diff_below(got: &[f64], reference: &[f64], bound: f64, what: &str) {
    assert_eq!(got.len(), reference.len(), "{what}: output has {} values, reference {}", got.len(), reference.len());
    if let Some(i) = got.iter().position(|v| !v.is_finite()) {
        panic!("{what}: output #{i} is {}", got[i]);
    }
    assert!(reference.iter().any(|&v| v != 0.0), "{what}: reference is all zeros");
    let diff = calc_diff(got, reference);
    assert!(diff < bound, "{what}: calc_diff = {diff:e}, bound {bound:e}");
}

/// [`assert_calc_diff_below`] for a backend's `Output`, also checking its dtype.
pub fn assert_output_close(out: &Output, want_dtype: OutDtype, reference: &[f64], bound: f64, what: &str) {
    assert_eq!(out.dtype(), want_dtype, "{what}: output dtype");
    assert_calc_diff_below(&out.to_f64(), reference, bound, what);
}

/// The calc_diff bounds of the acceptance criteria, per output dtype.
pub fn calc_diff_bound(out: OutDtype) -> f64 {
    match out {
        OutDtype::F32 => 1e-9,
        OutDtype::Bf16 | OutDtype::F16 => 1e-5,
    }
}
