//! The CPU backend: the reference every GPU backend is tested against, and the default on
//! machines without a GPU. Multi-threaded with rayon.
//!
//! GEMM scheme (the same arithmetic as the GPU kernels): for each output tile of
//! BLOCK_SIZE_M x BLOCK_SIZE_N and each K block kb of the scale block width,
//! partial[m, n] = sum_{k in kb} A[m, k] * B[n, k] in f32 (k ascending, one FMA chain per
//! element where the CPU has AVX2+FMA), then total[m, n] += partial[m, n] * As[m, kb] *
//! Bs[n / scale_block_n, kb] in f32. Every output element goes through exactly the same
//! operations whatever the tile sizes and whatever M is, so all CPU configs give
//! bit-identical f32 results on one machine, and a row's result does not depend on the
//! other rows of the batch (batch invariance).

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::backend::{Backend, GemmLaunch, GemmLaunchArgs, QuantTokensArgs, QuantWeightArgs};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::problem::{ActScales, GemmProblem};
use crate::quant::TokenQuantOptions;
use crate::stream::Stream;
use crate::types::{BackendKind, GemmPath, GemmShape, InputDtype, OutDtype, ScaleLayout};

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
    cpu_config(64, 128)
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
    /// Host memory: any address of the element's natural alignment serves.
    fn alignment(&self) -> usize {
        1
    }
    crate::memory::host_memory_primitives!();
    /// Any shape and block are supported; the vendor path is not (no BLAS here), and a tuned
    /// config must have tile sides in 1..=1024.
    fn supports(&self, _shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        match path {
            GemmPath::Vendor => Err("the CPU backend has no vendor BLAS".into()),
            GemmPath::Tuned(cfg) => check_tile(cfg),
            GemmPath::KernelDefault => Ok(()),
        }
    }
    fn resolve_gemm(&self, shape: &GemmShape, path: &GemmPath, _layout: ScaleLayout) -> Result<Box<dyn GemmLaunch>> {
        let (block_m, block_n) = tile_of(path)?;
        Ok(Box::new(CpuGemm { shape: *shape, block_m, block_n }))
    }
    unsafe fn enqueue_quantize_tokens(&self, _stream: &Stream, a: &QuantTokensArgs) -> Result<()> {
        let x = host_input(a.x, a.input, a.m * a.k);
        let opts = TokenQuantOptions { group: a.group, format: a.format, fp8_max: Some(a.fp8_max), layout: a.layout, ue8m0: a.ue8m0 };
        let out = crate::quant::quantize_per_token_group(&x, a.m, a.k, &opts)?;
        std::ptr::copy_nonoverlapping(out.q.as_ptr(), a.q as *mut u8, out.q.len());
        std::ptr::copy_nonoverlapping(out.scales.as_ptr(), a.s as *mut f32, out.scales.len());
        Ok(())
    }
    unsafe fn enqueue_quantize_weight(&self, _stream: &Stream, a: &QuantWeightArgs) -> Result<()> {
        let w = host_input(a.w, a.input, a.n * a.k);
        let out = crate::quant::quantize_weight_blocks(&w, a.n, a.k, (128, 128), a.format)?;
        std::ptr::copy_nonoverlapping(out.q.as_ptr(), a.q as *mut u8, out.q.len());
        std::ptr::copy_nonoverlapping(out.scales.as_ptr(), a.s as *mut f32, out.scales.len());
        Ok(())
    }
    unsafe fn enqueue_convert_to_fnuz(&self, _stream: &Stream, q: u64, bytes: usize, s: u64, scales: usize) -> Result<()> {
        let q = std::slice::from_raw_parts_mut(q as *mut u8, bytes);
        let s = std::slice::from_raw_parts_mut(s as *mut f32, scales);
        crate::formats::convert_e4m3fn_to_fnuz(q, s)
    }
    /// BLOCK_SIZE_M in {8, 16, 32, 64} x BLOCK_SIZE_N in {32, 64, 128, 256}.
    fn candidate_configs(&self) -> Vec<KernelConfig> {
        BLOCK_M_CHOICES.iter().flat_map(|&bm| BLOCK_N_CHOICES.iter().map(move |&bn| cpu_config(bm, bn))).collect()
    }
    fn default_config(&self) -> KernelConfig {
        default_cpu_config()
    }
}

/// `len` input values at host address `addr`, as f32.
///
/// # Safety
/// `addr` must hold `len` elements of `input`.
unsafe fn host_input(addr: u64, input: InputDtype, len: usize) -> Vec<f32> {
    match input {
        InputDtype::F32 => std::slice::from_raw_parts(addr as *const f32, len).to_vec(),
        InputDtype::Bf16 => std::slice::from_raw_parts(addr as *const half::bf16, len).iter().map(|v| v.to_f32()).collect(),
        InputDtype::F16 => std::slice::from_raw_parts(addr as *const half::f16, len).iter().map(|v| v.to_f32()).collect(),
    }
}

/// The CPU product for one shape's N, K, block and output, any M: the reference arithmetic.
struct CpuGemm {
    shape: GemmShape,
    block_m: usize,
    block_n: usize,
}

impl GemmLaunch for CpuGemm {
    fn describe(&self) -> String {
        format!("cpu {}x{} tiles", self.block_m, self.block_n)
    }
    fn workspace_bytes(&self, _m: usize) -> usize {
        0
    }
    fn workspace_bound(&self, _max_m: usize) -> usize {
        0
    }
    unsafe fn enqueue(&self, _stream: &Stream, a: &GemmLaunchArgs) -> Result<()> {
        let shape = GemmShape { m: a.m, ..self.shape };
        let (kb, nb) = (shape.k_blocks(), shape.n_blocks());
        let p = GemmProblem {
            shape,
            a: std::slice::from_raw_parts(a.a as *const u8, a.m * a.k),
            a_scales: ActScales { data: std::slice::from_raw_parts(a.a_scales as *const f32, a.a_layout.scale_count(a.m, kb)), layout: a.a_layout },
            b: std::slice::from_raw_parts(a.b as *const u8, a.n * a.k),
            b_scales: std::slice::from_raw_parts(a.b_scales as *const f32, nb * kb),
        };
        let c = gemm_f32(&p, self.block_m, self.block_n)?;
        let len = a.m * a.n;
        match shape.out_dtype {
            OutDtype::F32 => std::ptr::copy_nonoverlapping(c.as_ptr(), a.c as *mut f32, len),
            OutDtype::Bf16 => std::slice::from_raw_parts_mut(a.c as *mut half::bf16, len).iter_mut().zip(&c).for_each(|(o, v)| *o = half::bf16::from_f32(*v)),
            OutDtype::F16 => std::slice::from_raw_parts_mut(a.c as *mut half::f16, len).iter_mut().zip(&c).for_each(|(o, v)| *o = half::f16::from_f32(*v)),
        }
        Ok(())
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

/// The block-scaled product in f32, row-major [M, N], tiled block_m x block_n (0 counts
/// as 1). Validates `p` first.
///
/// A is decoded to f32 once. Tasks (run in parallel) are panels of up to PANEL_ROWS rows x
/// block_n columns; inside a panel, each K block decodes the B tile once (transposed, f32),
/// then each block_m-row sub-tile runs the register-blocked micro-kernel on it.
pub fn gemm_f32(p: &GemmProblem, block_m: usize, block_n: usize) -> Result<Vec<f32>> {
    gemm_f32_with(p, block_m, block_n, fma_available())
}

/// `gemm_f32` with the vector paths on or off (off is the portable path of CPUs without
/// AVX2+FMA; the tests run it here).
fn gemm_f32_with(p: &GemmProblem, block_m: usize, block_n: usize, use_avx2: bool) -> Result<Vec<f32>> {
    p.validate()?;
    let s = &p.shape;
    let (m, n) = (s.m, s.n);
    // Sub-tiles are whole register blocks so that their padded rows never overlap.
    let block_m = block_m.max(1).div_ceil(MR) * MR;
    let block_n = block_n.max(1);
    let panel_rows = (PANEL_ROWS / block_m).max(1) * block_m;
    let decoder = Decoder { format: s.format, table: s.format.decode_table(), use_avx2 };
    let m_panels = m.div_ceil(panel_rows);
    let n_tiles = n.div_ceil(block_n);
    // A is decoded once (rows padded with zeros to a whole register block); every panel
    // reads its rows in place.
    let k = s.k;
    let mut a_f32 = vec![0.0f32; m.div_ceil(MR) * MR * k];
    a_f32[..m * k].par_chunks_mut(k).zip(p.a.par_chunks(k)).for_each(|(dst, src)| {
        for (d, &b) in dst.iter_mut().zip(src) {
            *d = decoder.table[b as usize];
        }
    });
    let ctx = GemmContext { p, decoder, a_f32: &a_f32, block_m };
    let panels: Vec<Vec<f32>> = (0..m_panels * n_tiles)
        .into_par_iter()
        .map_init(TileScratch::default, |scratch, t| {
            let (mp, nt) = (t / n_tiles, t % n_tiles);
            let rows = mp * panel_rows..((mp + 1) * panel_rows).min(m);
            let cols = nt * block_n..((nt + 1) * block_n).min(n);
            compute_panel(&ctx, rows, cols, scratch)
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
    Ok(c)
}

/// What every panel of one product shares.
struct GemmContext<'a> {
    p: &'a GemmProblem<'a>,
    decoder: Decoder,
    /// A decoded, [round_up(M, MR), K] row-major, padding rows zero.
    a_f32: &'a [f32],
    /// Sub-tile rows, a multiple of MR.
    block_m: usize,
}

/// Per-thread buffers reused across panels.
#[derive(Default)]
struct TileScratch {
    /// Decoded, transposed B tile, [kc, bt_stride] row-major.
    bt: Vec<f32>,
    /// f32 running totals, [rows_pad, cols_pad].
    total: Vec<f32>,
    a_scale: Vec<f32>,
    b_scale: Vec<f32>,
}

/// One panel of C, returned row-major [rows.len(), cols.len()].
fn compute_panel(ctx: &GemmContext, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>, sc: &mut TileScratch) -> Vec<f32> {
    let GemmContext { p, a_f32, block_m, .. } = *ctx;
    let s = &p.shape;
    let k = s.k;
    let (scale_bn, bk) = s.block;
    let k_blocks = s.k_blocks();
    // Pad to whole register blocks with zeros; padded lanes are computed and dropped.
    let rows_pad = rows.len().div_ceil(MR) * MR;
    let cols_pad = cols.len().div_ceil(NR) * NR;
    // One spare strip per bt row: a power-of-two row pitch would map the strided writes
    // of `transpose_decode` onto a few L1 sets and thrash them.
    let bt_stride = cols_pad + NR;
    sc.total.clear();
    sc.total.resize(rows_pad * cols_pad, 0.0);
    sc.b_scale.resize(cols_pad, 0.0);
    let b_panel = &p.b[cols.start * k..cols.end * k];

    for kb in 0..k_blocks {
        let k0 = kb * bk;
        let kc = bk.min(k - k0);
        sc.bt.clear();
        sc.bt.resize(kc * bt_stride, 0.0);
        transpose_decode(&ctx.decoder, &b_panel[k0..], k, cols.len(), kc, &mut sc.bt, bt_stride);
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
            let blk = KBlock { a, lda: k, bt: &sc.bt, bt_stride, kc, cols_pad, a_scale: &sc.a_scale, b_scale: &sc.b_scale };
            run_kblock(&blk, &mut sc.total[sub0 * cols_pad..(sub0 + sub_pad) * cols_pad], sub_pad, ctx.decoder.use_avx2);
        }
    }

    let width = cols.len();
    let mut out = Vec::with_capacity(rows.len() * width);
    for i in 0..rows.len() {
        out.extend_from_slice(&sc.total[i * cols_pad..i * cols_pad + width]);
    }
    out
}

/// bt[kk * ldb + j] = decode(b[j * ldb_b + kk]) for j < cols, kk < kc: the B tile decoded
/// and transposed so that the micro-kernel reads NR consecutive columns per k.
fn transpose_decode(dec: &Decoder, b: &[u8], ldb_b: usize, cols: usize, kc: usize, bt: &mut [f32], ldb: usize) {
    let (format, table) = (dec.format, &dec.table);
    #[cfg(target_arch = "x86_64")]
    if dec.use_avx2 {
        let (cols8, kc8) = (cols / 8 * 8, kc / 8 * 8);
        // SAFETY: AVX2 is present (`use_avx2`); indices stay below cols8 <= cols and
        // kc8 <= kc, within `b` and `bt` as the scalar path's.
        unsafe { avx2::transpose_decode_8x8(b, ldb_b, cols8, kc8, format, bt, ldb) };
        transpose_decode_scalar(b, ldb_b, cols8..cols, 0..kc, table, bt, ldb);
        transpose_decode_scalar(b, ldb_b, 0..cols8, kc8..kc, table, bt, ldb);
        return;
    }
    let _ = format;
    transpose_decode_scalar(b, ldb_b, 0..cols, 0..kc, table, bt, ldb);
}

/// How fp8 bytes become f32 in this product.
struct Decoder {
    format: Fp8Format,
    table: [f32; 256],
    /// AVX2 and FMA present: vector decode here and the FMA micro-kernel.
    use_avx2: bool,
}

/// `transpose_decode` for the columns `js` and k offsets `ks`, one value at a time.
fn transpose_decode_scalar(b: &[u8], ldb_b: usize, js: std::ops::Range<usize>, ks: std::ops::Range<usize>, table: &[f32; 256], bt: &mut [f32], ldb: usize) {
    for j in js {
        for kk in ks.clone() {
            bt[kk * ldb + j] = table[b[j * ldb_b + kk] as usize];
        }
    }
}

/// One K block of one tile, decoded.
struct KBlock<'a> {
    /// A rows of the sub-tile from column k0 on; row r starts at r * lda.
    a: &'a [f32],
    lda: usize,
    bt: &'a [f32],
    kc: usize,
    /// Row pitch of `bt` (>= cols_pad).
    bt_stride: usize,
    /// Columns computed (a multiple of NR) and row pitch of the totals.
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
    debug_assert!(blk.a.len() >= (rows_pad - 1) * blk.lda + blk.kc && blk.bt.len() >= (blk.kc - 1) * blk.bt_stride + blk.cols_pad);
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
    let (kc, ldb, bts) = (blk.kc, blk.cols_pad, blk.bt_stride);
    for j0 in (0..ldb).step_by(NR) {
        for i0 in (0..rows_pad).step_by(MR) {
            let mut acc = [[0.0f32; NR]; MR];
            for kk in 0..kc {
                let b = &blk.bt[kk * bts + j0..kk * bts + j0 + NR];
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
    use crate::formats::Fp8Format;
    use std::arch::x86_64::*;

    /// Decodes 8 fp8 bytes to f32 exactly, without a table: the 7 magnitude bits placed at
    /// f32 bit 20 form an f32 with the fp8 exponent and mantissa (a subnormal f32 when the
    /// fp8 exponent is 0), and one multiplication by 2^(127 - bias) rebiases it; NaN
    /// patterns are blended in.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn decode8(bytes: *const u8, format: Fp8Format) -> __m256 {
        let v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(bytes as *const __m128i));
        let mag = _mm256_and_si256(v, _mm256_set1_epi32(0x7F));
        let sign = _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x80)), 24);
        let (rebias, nan_mask) = match format {
            Fp8Format::E4m3fn => (2f32.powi(120), _mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7F))),
            Fp8Format::E4m3fnuz => (2f32.powi(119), _mm256_cmpeq_epi32(v, _mm256_set1_epi32(0x80))),
        };
        let value = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_slli_epi32(mag, 20)), _mm256_set1_ps(rebias));
        let signed = _mm256_or_ps(value, _mm256_castsi256_ps(sign));
        _mm256_blendv_ps(signed, _mm256_set1_ps(f32::NAN), _mm256_castsi256_ps(nan_mask))
    }

    /// `transpose_decode` on whole 8 x 8 blocks: 8 B rows of 8 bytes each are decoded into
    /// 8 registers, transposed in registers and stored as 8 contiguous bt row segments.
    ///
    /// # Safety
    /// AVX2 must be present; b[j * ldb_b + kk] must exist for j < cols8, kk < kc8 and
    /// bt[kk * ldb + j] for the same; cols8 and kc8 multiples of 8.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn transpose_decode_8x8(b: &[u8], ldb_b: usize, cols8: usize, kc8: usize, format: Fp8Format, bt: &mut [f32], ldb: usize) {
        debug_assert!(cols8 % 8 == 0 && kc8 % 8 == 0);
        debug_assert!(cols8 == 0 || kc8 == 0 || ((cols8 - 1) * ldb_b + kc8 <= b.len() && (kc8 - 1) * ldb + cols8 <= bt.len()));
        let (bp, btp) = (b.as_ptr(), bt.as_mut_ptr());
        for j in (0..cols8).step_by(8) {
            for kk in (0..kc8).step_by(8) {
                let r: [__m256; 8] = std::array::from_fn(|i| decode8(bp.add((j + i) * ldb_b + kk), format));
                let t0 = _mm256_unpacklo_ps(r[0], r[1]);
                let t1 = _mm256_unpackhi_ps(r[0], r[1]);
                let t2 = _mm256_unpacklo_ps(r[2], r[3]);
                let t3 = _mm256_unpackhi_ps(r[2], r[3]);
                let t4 = _mm256_unpacklo_ps(r[4], r[5]);
                let t5 = _mm256_unpackhi_ps(r[4], r[5]);
                let t6 = _mm256_unpacklo_ps(r[6], r[7]);
                let t7 = _mm256_unpackhi_ps(r[6], r[7]);
                let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
                let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
                let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
                let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
                let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
                let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
                let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
                let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
                let out = [
                    _mm256_permute2f128_ps::<0x20>(u0, u4),
                    _mm256_permute2f128_ps::<0x20>(u1, u5),
                    _mm256_permute2f128_ps::<0x20>(u2, u6),
                    _mm256_permute2f128_ps::<0x20>(u3, u7),
                    _mm256_permute2f128_ps::<0x31>(u0, u4),
                    _mm256_permute2f128_ps::<0x31>(u1, u5),
                    _mm256_permute2f128_ps::<0x31>(u2, u6),
                    _mm256_permute2f128_ps::<0x31>(u3, u7),
                ];
                for (t, o) in out.iter().enumerate() {
                    _mm256_storeu_ps(btp.add((kk + t) * ldb + j), *o);
                }
            }
        }
    }

    /// The same computation as `kblock_scalar` with 8-lane FMAs: a 4 x 16 register block
    /// (8 accumulators), B row segment loaded once per k and A broadcast per row.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `blk.a` must hold (rows_pad - 1) * lda + kc values,
    /// `blk.bt` (kc - 1) * bt_stride + cols_pad, `total` rows_pad * cols_pad, the scales rows_pad and
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
                    b_ptr = b_ptr.add(blk.bt_stride);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{ActScales, OutDtype};
    use crate::quant::ScaleLayout;

    /// The portable path (used on CPUs without AVX2+FMA) computes the same product as the
    /// vector path, up to FMA's single rounding; checked against an f64 sum here.
    #[test]
    fn portable_and_vector_paths_agree() {
        let (m, n, k) = (7, 45, 300);
        let format = Fp8Format::E4m3fnuz;
        let a: Vec<u8> = (0..m * k).map(|i| ((i * 53 + 11) % 256) as u8).map(|b| if b == 0x80 { 0 } else { b }).collect();
        let b: Vec<u8> = (0..n * k).map(|i| ((i * 29 + 5) % 256) as u8).map(|b| if b == 0x80 { 1 } else { b }).collect();
        let a_scales: Vec<f32> = (0..m * 3).map(|i| 0.01 * (i + 1) as f32).collect();
        let b_scales: Vec<f32> = (0..3).map(|i| 0.5 + i as f32).collect();
        let p = GemmProblem {
            shape: GemmShape { m, n, k, block: (128, 128), format, out_dtype: OutDtype::F32 },
            a: &a,
            a_scales: ActScales { data: &a_scales, layout: ScaleLayout::RowMajor },
            b: &b,
            b_scales: &b_scales,
        };
        let portable = gemm_f32_with(&p, 8, 32, false).unwrap();
        let want: Vec<f64> = (0..m * n)
            .map(|i| {
                let (r, c) = (i / n, i % n);
                (0..k).map(|kk| format.decode(a[r * k + kk]) as f64 * format.decode(b[c * k + kk]) as f64 * a_scales[r * 3 + kk / 128] as f64 * b_scales[kk / 128] as f64).sum()
            })
            .collect();
        let scale = want.iter().fold(0.0f64, |x, v| x.max(v.abs()));
        for (i, (&got, &w)) in portable.iter().zip(&want).enumerate() {
            assert!((got as f64 - w).abs() <= 1e-5 * scale, "C[{i}] = {got}, want {w}");
        }
        if fma_available() {
            let vector = gemm_f32_with(&p, 8, 32, true).unwrap();
            for (&x, &y) in portable.iter().zip(&vector) {
                assert!(((x - y) as f64).abs() <= 1e-5 * scale);
            }
        }
    }

    /// The AVX2 decode-and-transpose must equal the table path bit for bit, NaN patterns
    /// included, on ragged sizes.
    #[test]
    fn transpose_decode_paths_agree() {
        if !fma_available() {
            return;
        }
        let (cols, kc, ldb_b) = (37, 61, 70);
        let b: Vec<u8> = (0..cols * ldb_b).map(|i| (i * 37 + i / 7) as u8).collect();
        for format in [Fp8Format::E4m3fn, Fp8Format::E4m3fnuz] {
            let ldb = 48;
            let mut fast = vec![0.0f32; kc * ldb];
            let mut slow = vec![0.0f32; kc * ldb];
            let dec = |use_avx2| Decoder { format, table: format.decode_table(), use_avx2 };
            transpose_decode(&dec(true), &b, ldb_b, cols, kc, &mut fast, ldb);
            transpose_decode(&dec(false), &b, ldb_b, cols, kc, &mut slow, ldb);
            let bits = |v: &[f32]| v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&slow), "{format}");
            assert!(slow.iter().any(|x| x.is_nan()), "the test bytes include NaN patterns");
        }
    }
}
