//! Inputs for timing and the reference every candidate's output is checked against.
//!
//! Inputs are random fp8 codes (sign, exponents in a narrow band, any mantissa; never a NaN
//! code in either flavour) with random positive scales, generated from a seed so that every
//! worker and every shard builds the same problem for the same (shape, M).
//! The reference is the CPU backend's f32 result for the same inputs; for large problems it
//! covers a sample of rows and whole column blocks (a sub-problem the CPU solves in
//! milliseconds) so that checking never dominates tuning on a GPU host.

use crate::backend::cpu::CpuBackend;
use crate::backend::HostOps;
use crate::error::Result;
use crate::gemm::{calc_diff, ActScales, GemmPath, GemmProblem, GemmShape, OutDtype, Output};
use crate::quant::ScaleLayout;

/// splitmix64: small, seedable, good enough for test data.
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Mixes a seed with the sizes so each (M, N, K) gets its own data.
pub fn seed_for(seed: u64, m: usize, n: usize, k: usize) -> u64 {
    let mut s = SplitMix::new(seed ^ (m as u64).rotate_left(40) ^ (n as u64).rotate_left(20) ^ k as u64);
    s.next_u64()
}

/// Owned buffers of one product.
#[derive(Clone, Debug)]
pub struct ProblemData {
    pub shape: GemmShape,
    pub a: Vec<u8>,
    pub a_scales: Vec<f32>,
    pub layout: ScaleLayout,
    pub b: Vec<u8>,
    pub b_scales: Vec<f32>,
}

/// Random fp8 codes with exponent field 4..=10: magnitudes 2^-4..2^3 in both flavours, no
/// NaN code (0x7F/0xFF need exponent 15; fnuz's 0x80 needs exponent 0). Generated in
/// independently seeded chunks on the rayon pool (weights reach hundreds of MB), so the
/// result does not depend on the thread count.
fn random_codes(seed: u64, len: usize) -> Vec<u8> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 20;
    let mut out = vec![0u8; len];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut rng = SplitMix::new(seed ^ (c as u64).wrapping_mul(0xA24B_AED4_963E_E407));
        for bytes in chunk.chunks_mut(8) {
            let r = rng.next_u64().to_le_bytes();
            for (dst, b) in bytes.iter_mut().zip(r) {
                let sign = b >> 7;
                let exp = 4 + (b & 7) % 7;
                let mant = (b >> 3) & 7;
                *dst = (sign << 7) | (exp << 3) | mant;
            }
        }
    });
    out
}

fn random_scales(rng: &mut SplitMix, len: usize) -> Vec<f32> {
    (0..len).map(|_| 0.001 + 0.009 * rng.next_f32()).collect()
}

impl ProblemData {
    /// Allocates the whole problem: check `shape` with [`GemmShape::check_size`] first.
    pub fn random(shape: GemmShape, layout: ScaleLayout, seed: u64) -> ProblemData {
        let mut rng = SplitMix::new(seed_for(seed, shape.m, shape.n, shape.k));
        let a = random_codes(rng.next_u64(), shape.m * shape.k);
        let b = random_codes(rng.next_u64(), shape.n * shape.k);
        let a_scales = random_scales(&mut rng, GemmProblem::a_scales_len(&shape, layout));
        let b_scales = random_scales(&mut rng, shape.n_blocks() * shape.k_blocks());
        ProblemData { shape, a, a_scales, layout, b, b_scales }
    }

    pub fn problem(&self) -> GemmProblem<'_> {
        GemmProblem {
            shape: self.shape,
            a: &self.a,
            a_scales: ActScales { data: &self.a_scales, layout: self.layout },
            b: &self.b,
            b_scales: &self.b_scales,
        }
    }
}

/// Reference values at `rows` x `cols` of the output.
#[derive(Clone, Debug)]
pub struct Reference {
    pub rows: Vec<usize>,
    pub cols: Vec<usize>,
    /// Row-major [rows.len(), cols.len()].
    pub values: Vec<f64>,
    /// True when only a sample of the output is covered.
    pub sampled: bool,
}

/// Up to `count` indices spread evenly over 0..len, first and last included.
fn spread(len: usize, count: usize) -> Vec<usize> {
    if len <= count {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..count).map(|i| i * (len - 1) / (count - 1)).collect();
    v.dedup();
    v
}

/// Rows and column blocks sampled when the full reference is too expensive.
const SAMPLE_ROWS: usize = 16;
const SAMPLE_COL_BLOCKS: usize = 4;

/// Default cost limit (multiply-adds) for a full-output reference.
pub const FULL_REFERENCE_MACS: f64 = 64e6;

impl Reference {
    /// The CPU backend's result for `p` (validated here): the full output when
    /// M*N*K <= `full_macs`, else sampled rows x sampled whole column blocks.
    pub fn compute(p: &GemmProblem, full_macs: f64) -> Result<Reference> {
        p.validate()?;
        let s = p.shape;
        let cpu = CpuBackend::new();
        if (s.m * s.n) as f64 * s.k as f64 <= full_macs {
            let shape = GemmShape { out_dtype: OutDtype::F32, format: s.format, ..s };
            let full = GemmProblem { shape, ..*p };
            let values = cpu.gemm(&full, &GemmPath::KernelDefault)?.to_f64();
            return Ok(Reference { rows: (0..s.m).collect(), cols: (0..s.n).collect(), values, sampled: false });
        }
        let rows = spread(s.m, SAMPLE_ROWS);
        let blocks = spread(s.n_blocks(), SAMPLE_COL_BLOCKS);
        let (bn, kb) = (s.block.0, s.k_blocks());
        let cols: Vec<usize> = blocks.iter().flat_map(|&j| j * bn..((j + 1) * bn).min(s.n)).collect();
        let mut a = Vec::with_capacity(rows.len() * s.k);
        let mut a_scales = Vec::with_capacity(rows.len() * kb);
        for &r in &rows {
            a.extend_from_slice(&p.a[r * s.k..(r + 1) * s.k]);
            a_scales.extend((0..kb).map(|g| p.a_scale(r, g)));
        }
        let mut b = Vec::with_capacity(cols.len() * s.k);
        for &c in &cols {
            b.extend_from_slice(&p.b[c * s.k..(c + 1) * s.k]);
        }
        // Whole blocks in ascending order (a partial last block stays last), so the
        // sub-problem's weight blocks line up with the original's.
        let b_scales: Vec<f32> = blocks.iter().flat_map(|&j| p.b_scales[j * kb..(j + 1) * kb].iter().copied()).collect();
        let shape = GemmShape { m: rows.len(), n: cols.len(), out_dtype: OutDtype::F32, ..s };
        let sub = GemmProblem { shape, a: &a, a_scales: ActScales { data: &a_scales, layout: ScaleLayout::RowMajor }, b: &b, b_scales: &b_scales };
        sub.validate()?;
        let values = cpu.gemm(&sub, &GemmPath::KernelDefault)?.to_f64();
        Ok(Reference { rows, cols, values, sampled: true })
    }

    /// calc_diff of `out` (row-major [M, n]) against the reference at the covered entries;
    /// an error when the output has the wrong size or a non-finite value there.
    pub fn diff(&self, out: &Output, n: usize) -> std::result::Result<f64, String> {
        let m = self.rows.iter().max().map_or(0, |r| r + 1);
        if n == 0 || out.len() < m * n || out.len() % n != 0 {
            return Err(format!("output has {} values, expected a multiple of N={n} covering {m} rows", out.len()));
        }
        // Read only the covered entries: a GPU output can be hundreds of MB.
        let at = |i: usize| -> f64 {
            match out {
                Output::Bf16(v) => v[i].to_f64(),
                Output::F16(v) => v[i].to_f64(),
                Output::F32(v) => v[i] as f64,
            }
        };
        let mut got = Vec::with_capacity(self.values.len());
        for &r in &self.rows {
            for &c in &self.cols {
                let v = at(r * n + c);
                if !v.is_finite() {
                    return Err(format!("non-finite output {v} at ({r}, {c})"));
                }
                got.push(v);
            }
        }
        Ok(calc_diff(&got, &self.values))
    }
}
