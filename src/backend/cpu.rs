//! The CPU backend: the reference every GPU backend is tested against, and the default on
//! machines without a GPU. Multi-threaded with rayon.
//!
//! GEMM scheme (the same arithmetic as the GPU kernels): for each output tile of
//! BLOCK_SIZE_M x BLOCK_SIZE_N and each K block kb of the scale block width,
//! partial[m, n] = sum_{k in kb} A[m, k] * B[n, k] in f32 (k ascending), then
//! total[m, n] += partial[m, n] * As[m, kb] * Bs[n / block_n, kb] in f32. Every output
//! element goes through exactly the same operations whatever the tile sizes, so all CPU
//! configs give bit-identical f32 results on one machine.

use std::sync::OnceLock;
use std::time::Instant;

use rayon::prelude::*;

use crate::backend::{Backend, BackendKind, TimingOptions};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::gemm::{GemmPath, GemmProblem, GemmShape, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, TokenQuantOptions};

/// Register block of the micro-kernel: MR rows x NR columns of accumulators.
const MR: usize = 4;
const NR: usize = 16;
/// Largest tile side `supports` accepts for a tuned config.
const MAX_TILE: u32 = 1024;
/// The CPU "kernel config" search space the tuner explores.
const BLOCK_M_CHOICES: [u32; 4] = [8, 16, 32, 64];
const BLOCK_N_CHOICES: [u32; 4] = [32, 64, 128, 256];

pub struct CpuBackend {
    device: Device,
}

impl CpuBackend {
    pub fn new() -> Self {
        CpuBackend { device: Device::cpu() }
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// A CPU config: only BLOCK_SIZE_M and BLOCK_SIZE_N change the computation (tile sizes);
/// the K step is always the scale block width, and the GPU-only fields are fixed.
fn cpu_config(block_m: u32, block_n: u32) -> KernelConfig {
    KernelConfig {
        block_m,
        block_n,
        block_k: 128,
        group_m: 1,
        num_warps: 1,
        num_stages: None,
        matrix_instr_nonkdim: None,
        kpack: None,
        waves_per_eu: None,
        extra: Default::default(),
    }
}

fn default_cpu_config() -> KernelConfig {
    cpu_config(32, 128)
}

fn check_tile(cfg: &KernelConfig) -> std::result::Result<(), String> {
    for (name, v) in [("BLOCK_SIZE_M", cfg.block_m), ("BLOCK_SIZE_N", cfg.block_n)] {
        if v == 0 || v > MAX_TILE {
            return Err(format!("{name} = {v} is outside 1..={MAX_TILE} on the CPU backend"));
        }
    }
    Ok(())
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn device(&self) -> &Device {
        &self.device
    }
    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        crate::quant::quantize_per_token_group(x, m, k, opts)
    }
    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        crate::quant::quantize_weight_blocks(w, n, k, block, format)
    }
    /// Any shape and block are supported; the vendor path is not (no BLAS here), and a tuned
    /// config must have tile sides in 1..=1024.
    fn supports(&self, _shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        match path {
            GemmPath::Vendor => Err("the CPU backend has no vendor BLAS".into()),
            GemmPath::Tuned(cfg) => check_tile(cfg),
            GemmPath::KernelDefault => Ok(()),
        }
    }
    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output> {
        let (block_m, block_n) = tile_of(path)?;
        p.validate()?;
        Ok(Output::from_f32(p.shape.out_dtype, gemm_f32(p, block_m, block_n)))
    }
    /// Wall-clock seconds of each repeat after `opts.warmup` unmeasured runs. Inputs are not
    /// rotated (`rotate_bytes` is ignored): the CPU reads them from host memory either way.
    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        let (block_m, block_n) = tile_of(path)?;
        p.validate()?;
        for _ in 0..opts.warmup {
            std::hint::black_box(gemm_f32(p, block_m, block_n));
        }
        let mut times = Vec::with_capacity(opts.repeats);
        for _ in 0..opts.repeats {
            let start = Instant::now();
            let out = Output::from_f32(p.shape.out_dtype, gemm_f32(p, block_m, block_n));
            times.push(start.elapsed().as_secs_f64());
            std::hint::black_box(out);
        }
        Ok(times)
    }
    /// BLOCK_SIZE_M in {8, 16, 32, 64} x BLOCK_SIZE_N in {32, 64, 128, 256}.
    fn candidate_configs(&self) -> Vec<KernelConfig> {
        BLOCK_M_CHOICES.iter().flat_map(|&bm| BLOCK_N_CHOICES.iter().map(move |&bn| cpu_config(bm, bn))).collect()
    }
    fn default_config(&self) -> KernelConfig {
        default_cpu_config()
    }
}

fn tile_of(path: &GemmPath) -> Result<(usize, usize)> {
    match path {
        GemmPath::Vendor => Err(Error::Unsupported { path: path.label(), reason: "the CPU backend has no vendor BLAS".into() }),
        GemmPath::Tuned(cfg) => {
            check_tile(cfg).map_err(|reason| Error::Unsupported { path: path.label(), reason })?;
            Ok((cfg.block_m as usize, cfg.block_n as usize))
        }
        GemmPath::KernelDefault => {
            let cfg = default_cpu_config();
            Ok((cfg.block_m as usize, cfg.block_n as usize))
        }
    }
}

/// Rows of C one task computes for one column tile: B's decoded tile is reused by all
/// of them, so B is decoded ceil(M / PANEL_ROWS) times in total.
const PANEL_ROWS: usize = 256;

/// The block-scaled product in f32, row-major [M, N], tiled block_m x block_n. `p` must
/// have passed `GemmProblem::validate` (this function indexes without further checks).
///
/// Tasks (run in parallel) are panels of up to PANEL_ROWS rows x block_n columns; inside a
/// panel, each K block decodes the B tile once (transposed, f32), then each block_m-row
/// sub-tile decodes its A rows and runs the register-blocked micro-kernel.
pub fn gemm_f32(p: &GemmProblem, block_m: usize, block_n: usize) -> Vec<f32> {
    let s = &p.shape;
    let (m, n) = (s.m, s.n);
    // Sub-tiles are whole register blocks so that their padded rows never overlap.
    let block_m = block_m.max(1).div_ceil(MR) * MR;
    let block_n = block_n.max(1);
    let panel_rows = (PANEL_ROWS / block_m).max(1) * block_m;
    let table = s.format.decode_table();
    let m_panels = m.div_ceil(panel_rows);
    let n_tiles = n.div_ceil(block_n);
    let use_fma = fma_available();
    // A is decoded once (rows padded with zeros to a whole register block); every panel
    // reads its rows in place.
    let k = s.k;
    let mut a_f32 = vec![0.0f32; m.div_ceil(MR) * MR * k];
    a_f32[..m * k].par_chunks_mut(k).zip(p.a.par_chunks(k)).for_each(|(dst, src)| {
        for (d, &b) in dst.iter_mut().zip(src) {
            *d = table[b as usize];
        }
    });
    let panels: Vec<Vec<f32>> = (0..m_panels * n_tiles)
        .into_par_iter()
        .map_init(TileScratch::default, |scratch, t| {
            let (mp, nt) = (t / n_tiles, t % n_tiles);
            let rows = mp * panel_rows..((mp + 1) * panel_rows).min(m);
            let cols = nt * block_n..((nt + 1) * block_n).min(n);
            compute_panel(p, &table, &a_f32, rows, cols, block_m, scratch, use_fma)
        })
        .collect();
    let mut c = vec![0.0f32; m * n];
    for (t, panel) in panels.iter().enumerate() {
        let (mp, nt) = (t / n_tiles, t % n_tiles);
        let (m0, n0) = (mp * panel_rows, nt * block_n);
        let width = block_n.min(n - n0);
        for (i, src) in panel.chunks(width).enumerate() {
            c[(m0 + i) * n + n0..(m0 + i) * n + n0 + width].copy_from_slice(src);
        }
    }
    c
}

/// Per-thread buffers reused across panels.
#[derive(Default)]
struct TileScratch {
    /// Decoded, transposed B tile, [kc, cols_pad] row-major.
    bt: Vec<f32>,
    /// f32 running totals, [rows_pad, cols_pad].
    total: Vec<f32>,
    a_scale: Vec<f32>,
    b_scale: Vec<f32>,
}

/// One panel of C, returned row-major [rows.len(), cols.len()].
fn compute_panel(
    p: &GemmProblem,
    table: &[f32; 256],
    a_f32: &[f32],
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    block_m: usize,
    sc: &mut TileScratch,
    use_fma: bool,
) -> Vec<f32> {
    let s = &p.shape;
    let k = s.k;
    let (scale_bn, bk) = s.block;
    let k_blocks = s.k_blocks();
    // Pad to whole register blocks with zeros; padded lanes are computed and dropped.
    let rows_pad = rows.len().div_ceil(MR) * MR;
    let cols_pad = cols.len().div_ceil(NR) * NR;
    sc.total.clear();
    sc.total.resize(rows_pad * cols_pad, 0.0);
    sc.b_scale.resize(cols_pad, 0.0);
    let b_panel = &p.b[cols.start * k..cols.end * k];

    for kb in 0..k_blocks {
        let k0 = kb * bk;
        let kc = bk.min(k - k0);
        sc.bt.clear();
        sc.bt.resize(kc * cols_pad, 0.0);
        // k outer: writes are sequential and the tile's B rows (kc bytes each) stay in L1.
        for kk in 0..kc {
            let dst = &mut sc.bt[kk * cols_pad..kk * cols_pad + cols.len()];
            for (j, d) in dst.iter_mut().enumerate() {
                *d = table[b_panel[j * k + k0 + kk] as usize];
            }
        }
        for (j, col) in cols.clone().enumerate() {
            sc.b_scale[j] = p.b_scales[(col / scale_bn) * k_blocks + kb];
        }

        for sub0 in (0..rows.len()).step_by(block_m) {
            let sub_rows = block_m.min(rows.len() - sub0);
            let sub_pad = sub_rows.div_ceil(MR) * MR;
            sc.a_scale.clear();
            sc.a_scale.resize(sub_pad, 0.0);
            for i in 0..sub_rows {
                sc.a_scale[i] = p.a_scale(rows.start + sub0 + i, kb);
            }
            let a0 = (rows.start + sub0) * k + k0;
            let a = &a_f32[a0..a0 + (sub_pad - 1) * k + kc];
            let blk = KBlock { a, lda: k, bt: &sc.bt, kc, cols_pad, a_scale: &sc.a_scale, b_scale: &sc.b_scale };
            run_kblock(&blk, &mut sc.total[sub0 * cols_pad..(sub0 + sub_pad) * cols_pad], sub_pad, use_fma);
        }
    }

    let width = cols.len();
    let mut out = Vec::with_capacity(rows.len() * width);
    for i in 0..rows.len() {
        out.extend_from_slice(&sc.total[i * cols_pad..i * cols_pad + width]);
    }
    out
}

/// One K block of one tile, decoded.
struct KBlock<'a> {
    /// A rows of the sub-tile from column k0 on; row r starts at r * lda.
    a: &'a [f32],
    lda: usize,
    bt: &'a [f32],
    kc: usize,
    cols_pad: usize,
    a_scale: &'a [f32],
    b_scale: &'a [f32],
}

fn fma_available() -> bool {
    static FMA: OnceLock<bool> = OnceLock::new();
    *FMA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

fn run_kblock(blk: &KBlock, total: &mut [f32], rows_pad: usize, use_fma: bool) {
    debug_assert!(blk.a.len() >= (rows_pad - 1) * blk.lda + blk.kc && blk.bt.len() >= blk.kc * blk.cols_pad);
    debug_assert!(total.len() >= rows_pad * blk.cols_pad && blk.cols_pad % NR == 0 && rows_pad % MR == 0);
    #[cfg(target_arch = "x86_64")]
    if use_fma {
        // SAFETY: `use_fma` is true only when the CPU reports AVX2 and FMA; the buffer sizes
        // asserted above are guaranteed by `compute_tile`.
        unsafe { avx2::kblock(blk, total, rows_pad) };
        return;
    }
    let _ = use_fma;
    kblock_scalar(blk, total, rows_pad);
}

/// Portable micro-kernel (two roundings per multiply-add); used where AVX2+FMA is absent.
fn kblock_scalar(blk: &KBlock, total: &mut [f32], rows_pad: usize) {
    let (kc, ldb) = (blk.kc, blk.cols_pad);
    for j0 in (0..ldb).step_by(NR) {
        for i0 in (0..rows_pad).step_by(MR) {
            let mut acc = [[0.0f32; NR]; MR];
            for kk in 0..kc {
                let b = &blk.bt[kk * ldb + j0..kk * ldb + j0 + NR];
                for (r, acc_row) in acc.iter_mut().enumerate() {
                    let av = blk.a[(i0 + r) * blk.lda + kk];
                    for (a, &bv) in acc_row.iter_mut().zip(b) {
                        *a += av * bv;
                    }
                }
            }
            // Fold the K block into the running total: total += partial * As * Bs.
            for (r, acc_row) in acc.iter().enumerate() {
                let a_s = blk.a_scale[i0 + r];
                let t = &mut total[(i0 + r) * ldb + j0..(i0 + r) * ldb + j0 + NR];
                for c in 0..NR {
                    t[c] += acc_row[c] * a_s * blk.b_scale[j0 + c];
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{KBlock, MR, NR};
    use std::arch::x86_64::*;

    /// The same computation as `kblock_scalar` with 8-lane FMAs: a 4 x 16 register block
    /// (8 accumulators), B row segment loaded once per k and A broadcast per row.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `blk.a` must hold (rows_pad - 1) * lda + kc values,
    /// `blk.bt` kc * cols_pad, `total` rows_pad * cols_pad, the scales rows_pad and
    /// cols_pad; rows_pad and cols_pad multiples of MR and NR.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn kblock(blk: &KBlock, total: &mut [f32], rows_pad: usize) {
        const _: () = assert!(MR == 4 && NR == 16);
        let (kc, ldb) = (blk.kc, blk.cols_pad);
        let (a, bt, tot) = (blk.a.as_ptr(), blk.bt.as_ptr(), total.as_mut_ptr());
        for j0 in (0..ldb).step_by(NR) {
            for i0 in (0..rows_pad).step_by(MR) {
                let mut acc = [_mm256_setzero_ps(); 2 * MR];
                let lda = blk.lda;
                let a_rows = [a.add(i0 * lda), a.add((i0 + 1) * lda), a.add((i0 + 2) * lda), a.add((i0 + 3) * lda)];
                let mut b_ptr = bt.add(j0);
                for kk in 0..kc {
                    let b0 = _mm256_loadu_ps(b_ptr);
                    let b1 = _mm256_loadu_ps(b_ptr.add(8));
                    for r in 0..MR {
                        let av = _mm256_broadcast_ss(&*a_rows[r].add(kk));
                        acc[2 * r] = _mm256_fmadd_ps(av, b0, acc[2 * r]);
                        acc[2 * r + 1] = _mm256_fmadd_ps(av, b1, acc[2 * r + 1]);
                    }
                    b_ptr = b_ptr.add(ldb);
                }
                // total += (partial * As) * Bs, fused add.
                let bs0 = _mm256_loadu_ps(blk.b_scale.as_ptr().add(j0));
                let bs1 = _mm256_loadu_ps(blk.b_scale.as_ptr().add(j0 + 8));
                for r in 0..MR {
                    let a_s = _mm256_set1_ps(blk.a_scale[i0 + r]);
                    let t_ptr = tot.add((i0 + r) * ldb + j0);
                    let t0 = _mm256_fmadd_ps(_mm256_mul_ps(acc[2 * r], a_s), bs0, _mm256_loadu_ps(t_ptr));
                    let t1 = _mm256_fmadd_ps(_mm256_mul_ps(acc[2 * r + 1], a_s), bs1, _mm256_loadu_ps(t_ptr.add(8)));
                    _mm256_storeu_ps(t_ptr, t0);
                    _mm256_storeu_ps(t_ptr.add(8), t1);
                }
            }
        }
    }
}
