//! Runs the HIP kernels of `hip/` on the CPU, through the emulation layer in `hip/emu/`
//! (the same kernel sources compiled as host C++; see hip/emu/emu_runtime.h for the
//! execution model). For tests and for checking kernels where no AMD GPU exists; it is
//! slow (every work-item is a fiber) and says nothing about GPU speed.
//!
//! Every launch registers its buffers so that an out-of-range access in a kernel is an
//! error, and poisons outputs (NaN / 0xFF) first so that an element the kernel forgets to
//! write shows up.

use std::ffi::{c_char, c_void, CStr};

use half::{bf16, f16};

use super::kernels::{self, GemmKernel};
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::gemm::{GemmProblem, OutDtype, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, ScaleLayout, TokenQuantOptions};

type EmuGemmFn = unsafe extern "C" fn(
    *const u8,
    *const f32,
    *const u8,
    *const f32,
    *mut c_void,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    *mut c_void,
    u32,
    u32,
    u32,
) -> i32;

mod generated {
    use super::EmuGemmFn;
    use std::ffi::c_void;
    include!(concat!(env!("OUT_DIR"), "/hip_emu.rs"));
}

extern "C" {
    fn emu_last_error() -> *const c_char;
    fn emu_register_buffer(p: *const c_void, bytes: usize);
    fn emu_clear_buffers();
    fn emu_mfma_lanes(shape: i32, flavour: i32, a: *const u64, b: *const u64, c: *const f32, d: *mut f32) -> i32;
    fn emu_cvt_pk_fp8_f32(flavour: i32, a: f32, b: f32, old: i32, word_sel: i32) -> i32;
    fn emu_cvt_f32_fp8(flavour: i32, src: i32, byte_sel: i32) -> f32;

    fn emu_quant_per_token_group_gfx942(x: *const f32, q: *mut u8, s: *mut f32, m: i32, k: i32, fp8_max: f32, s_stride_m: i32, s_stride_g: i32, ue8m0: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_per_token_group_gfx950(x: *const f32, q: *mut u8, s: *mut f32, m: i32, k: i32, fp8_max: f32, s_stride_m: i32, s_stride_g: i32, ue8m0: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_weight_blocks_gfx942(w: *const f32, q: *mut u8, s: *mut f32, n: i32, k: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_weight_blocks_gfx950(w: *const f32, q: *mut u8, s: *mut f32, n: i32, k: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_per_token_group_bf16_gfx942(x: *const u16, q: *mut u8, s: *mut f32, m: i32, k: i32, fp8_max: f32, s_stride_m: i32, s_stride_g: i32, ue8m0: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_per_token_group_bf16_gfx950(x: *const u16, q: *mut u8, s: *mut f32, m: i32, k: i32, fp8_max: f32, s_stride_m: i32, s_stride_g: i32, ue8m0: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_per_token_group_f16_gfx942(x: *const u16, q: *mut u8, s: *mut f32, m: i32, k: i32, fp8_max: f32, s_stride_m: i32, s_stride_g: i32, ue8m0: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_per_token_group_f16_gfx950(x: *const u16, q: *mut u8, s: *mut f32, m: i32, k: i32, fp8_max: f32, s_stride_m: i32, s_stride_g: i32, ue8m0: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_weight_blocks_bf16_gfx942(w: *const u16, q: *mut u8, s: *mut f32, n: i32, k: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_weight_blocks_bf16_gfx950(w: *const u16, q: *mut u8, s: *mut f32, n: i32, k: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_weight_blocks_f16_gfx942(w: *const u16, q: *mut u8, s: *mut f32, n: i32, k: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_quant_weight_blocks_f16_gfx950(w: *const u16, q: *mut u8, s: *mut f32, n: i32, k: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_convert_e4m3fn_to_fnuz_gfx942(w: *mut u8, n_bytes: i64, s: *mut f32, n_scales: i64, gx: u32, gy: u32, gz: u32) -> i32;
}

type ScaleReduceFn = unsafe extern "C" fn(*const f32, i64, *const f32, *const f32, *mut c_void, i32, i32, i32, i32, i32, i32, u32, u32, u32) -> i32;
extern "C" {
    fn emu_scale_reduce_bf16_gfx942(p: *const f32, bs: i64, a: *const f32, b: *const f32, c: *mut c_void, m0: i32, rows: i32, n: i32, kb: i32, sm: i32, skb: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_scale_reduce_f16_gfx942(p: *const f32, bs: i64, a: *const f32, b: *const f32, c: *mut c_void, m0: i32, rows: i32, n: i32, kb: i32, sm: i32, skb: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_scale_reduce_f32_gfx942(p: *const f32, bs: i64, a: *const f32, b: *const f32, c: *mut c_void, m0: i32, rows: i32, n: i32, kb: i32, sm: i32, skb: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_scale_reduce_bf16_gfx950(p: *const f32, bs: i64, a: *const f32, b: *const f32, c: *mut c_void, m0: i32, rows: i32, n: i32, kb: i32, sm: i32, skb: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_scale_reduce_f16_gfx950(p: *const f32, bs: i64, a: *const f32, b: *const f32, c: *mut c_void, m0: i32, rows: i32, n: i32, kb: i32, sm: i32, skb: i32, gx: u32, gy: u32, gz: u32) -> i32;
    fn emu_scale_reduce_f32_gfx950(p: *const f32, bs: i64, a: *const f32, b: *const f32, c: *mut c_void, m0: i32, rows: i32, n: i32, kb: i32, sm: i32, skb: i32, gx: u32, gy: u32, gz: u32) -> i32;
}

const OP: &str = "hip emulator";

/// The architecture whose kernels (and fp8 flavour) the emulation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// CDNA3 (MI300X, MI325X): e4m3fnuz.
    Gfx942,
    /// CDNA4 (MI350X, MI355X): OCP e4m3fn.
    Gfx950,
}

impl Arch {
    pub const ALL: [Arch; 2] = [Arch::Gfx942, Arch::Gfx950];

    pub fn name(self) -> &'static str {
        match self {
            Arch::Gfx942 => "gfx942",
            Arch::Gfx950 => "gfx950",
        }
    }
    pub fn fp8(self) -> Fp8Format {
        match self {
            Arch::Gfx942 => Fp8Format::E4m3fnuz,
            Arch::Gfx950 => Fp8Format::E4m3fn,
        }
    }
    fn flavour(self) -> i32 {
        match self {
            Arch::Gfx942 => 0,
            Arch::Gfx950 => 1,
        }
    }
}

impl std::str::FromStr for Arch {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "gfx942" => Ok(Arch::Gfx942),
            "gfx950" => Ok(Arch::Gfx950),
            _ => Err(Error::invalid(OP, format!("architecture {s:?} (the HIP kernels target gfx942 and gfx950)"))),
        }
    }
}

/// Registers buffers for the emulator's range checks for the duration of one launch.
struct Registered;

impl Registered {
    fn new(buffers: &[(*const c_void, usize)]) -> Self {
        // SAFETY: plain bookkeeping on thread-local state of the emulation library.
        unsafe {
            emu_clear_buffers();
            for &(p, n) in buffers {
                emu_register_buffer(p, n);
            }
        }
        Registered
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { emu_clear_buffers() }
    }
}

/// The emulation library's entry point of GEMM `kernel` for `arch`.
fn emu_gemm_fn(arch: Arch, kernel: &GemmKernel) -> Result<EmuGemmFn> {
    generated::EMU_GEMMS
        .iter()
        .find(|(sym, a, _)| *sym == kernel.symbol && *a == arch.name())
        .map(|(_, _, f)| *f)
        .ok_or_else(|| Error::Unsupported { path: kernel.symbol.into(), reason: "not in the emulated kernel set".into() })
}

/// The emulation library's `scale_reduce_<out>` for `arch`.
fn scale_reduce_fn(arch: Arch, out: OutDtype) -> ScaleReduceFn {
    match (arch, out) {
        (Arch::Gfx942, OutDtype::Bf16) => emu_scale_reduce_bf16_gfx942,
        (Arch::Gfx942, OutDtype::F16) => emu_scale_reduce_f16_gfx942,
        (Arch::Gfx942, OutDtype::F32) => emu_scale_reduce_f32_gfx942,
        (Arch::Gfx950, OutDtype::Bf16) => emu_scale_reduce_bf16_gfx950,
        (Arch::Gfx950, OutDtype::F16) => emu_scale_reduce_f16_gfx950,
        (Arch::Gfx950, OutDtype::F32) => emu_scale_reduce_f32_gfx950,
    }
}

fn check(rc: i32, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    // SAFETY: emu_last_error returns a NUL-terminated thread-local string.
    let msg = unsafe { CStr::from_ptr(emu_last_error()) }.to_string_lossy().into_owned();
    Err(Error::Device { backend: "rocm-emulated", call: what.to_string(), reason: msg })
}

fn to_i32(v: usize, what: &str) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::shape(OP, format!("{what} = {v} exceeds 32-bit kernel indexing")))
}

fn grid_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::shape(OP, format!("{what} grid of {v} workgroups is too large")))
}

/// fp8 bytes copied into 16-byte aligned storage, optionally shifted by one byte so that
/// the kernels' unaligned-rows path (dword loads + v_alignbyte) runs instead of the 16-byte one.
struct Fp8Buffer {
    storage: Vec<u128>,
    offset: usize,
    len: usize,
}

impl Fp8Buffer {
    fn new(bytes: &[u8], misalign: bool) -> Self {
        let offset = usize::from(misalign);
        let mut storage = vec![0u128; (bytes.len() + offset).div_ceil(16).max(1)];
        // SAFETY: storage has at least offset + len bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(storage.as_mut_ptr() as *mut u8, storage.len() * 16) };
        dst[offset..offset + bytes.len()].copy_from_slice(bytes);
        Fp8Buffer { storage, offset, len: bytes.len() }
    }
    fn ptr(&self) -> *const u8 {
        // SAFETY: offset is within the allocation.
        unsafe { (self.storage.as_ptr() as *const u8).add(self.offset) }
    }
}

/// Runs a GEMM kernel from the emulated set on `p` (after `p.validate()`), with the
/// kernel's `group_m` and its K splits for [`EMULATED_COMPUTE_UNITS`] (a zeroed workspace). With `misalign`, A and B start one byte past a 16-byte boundary,
/// exercising the kernel's unaligned-rows path even when K % 16 == 0.
pub fn gemm(arch: Arch, kernel: &GemmKernel, p: &GemmProblem, misalign: bool) -> Result<Output> {
    p.validate()?;
    let s = &p.shape;
    if s.block != (kernels::SCALE_BLOCK, kernels::SCALE_BLOCK) {
        return Err(Error::Unsupported { path: kernel.symbol.into(), reason: format!("scale block {:?}; HIP kernels support (128, 128)", s.block) });
    }
    if s.format != arch.fp8() {
        return Err(Error::invalid(OP, format!("inputs are {:?} but {} computes in {:?}", s.format, arch.name(), arch.fp8())));
    }
    if s.out_dtype != kernel.out {
        return Err(Error::invalid(OP, format!("kernel {} writes {:?}, problem asks for {:?}", kernel.symbol, kernel.out, s.out_dtype)));
    }
    let f = emu_gemm_fn(arch, kernel)?;
    let (m, n, k) = (to_i32(s.m, "M")?, to_i32(s.n, "N")?, to_i32(s.k, "K")?);
    let (sm, skb) = p.a_scales.layout.strides(s.m, s.k_blocks());
    let a = Fp8Buffer::new(p.a, misalign);
    let b = Fp8Buffer::new(p.b, misalign);
    let grid = grid_u32(kernel.grid_x(s.m, s.n) as usize, "GEMM")?;
    let out_bytes = s.out_dtype.bytes();
    let mut c = vec![0xFFu8; s.m * s.n * out_bytes]; // NaN in every output dtype
    let splits = kernel.k_splits(s.m, s.n, s.k, EMULATED_COMPUTE_UNITS);
    // Partials are poisoned (NaN); the counters start at zero as the ABI asks.
    let mut work = vec![0u32; kernel.workspace_bytes(s.m, s.n, splits).div_ceil(4)];
    let counters_at = if splits > 1 { splits as usize * s.m * s.n } else { 0 };
    work[..counters_at].fill(f32::NAN.to_bits());
    let work_ptr = if splits > 1 { work.as_mut_ptr() as *mut c_void } else { std::ptr::null_mut() };
    let _reg = Registered::new(&[
        (work.as_ptr() as *const c_void, work.len() * 4),
        (a.ptr() as *const c_void, a.len),
        (b.ptr() as *const c_void, b.len),
        (p.a_scales.data.as_ptr() as *const c_void, p.a_scales.data.len() * 4),
        (p.b_scales.as_ptr() as *const c_void, p.b_scales.len() * 4),
        (c.as_ptr() as *const c_void, c.len()),
    ]);
    // SAFETY: every pointer covers the extent the kernel ABI implies for these sizes
    // (validated above), and the emulator checks each access against those extents.
    let rc = unsafe {
        f(a.ptr(), p.a_scales.data.as_ptr(), b.ptr(), p.b_scales.as_ptr(), c.as_mut_ptr() as *mut c_void, m, n, k, to_i32(sm, "scale stride")?, to_i32(skb, "scale stride")?, kernel.group_m_arg(), splits as i32, work_ptr, grid, splits, 1)
    };
    check(rc, kernel.symbol)?;
    if work[counters_at..].iter().any(|&c| c != 0) {
        return Err(Error::invalid(OP, format!("{}: split-K counters not reset to zero", kernel.symbol)));
    }
    Ok(bytes_to_output(s.out_dtype, &c))
}

/// The CU count the emulated launches size split K for (an MI300X's 304).
pub const EMULATED_COMPUTE_UNITS: u32 = 304;

fn bytes_to_output(out: OutDtype, c: &[u8]) -> Output {
    match out {
        OutDtype::F32 => Output::F32(c.chunks_exact(4).map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]])).collect()),
        OutDtype::Bf16 => Output::Bf16(c.chunks_exact(2).map(|x| bf16::from_bits(u16::from_le_bytes([x[0], x[1]]))).collect()),
        OutDtype::F16 => Output::F16(c.chunks_exact(2).map(|x| f16::from_bits(u16::from_le_bytes([x[0], x[1]]))).collect()),
    }
}

/// `quant_per_token_group` on `x` [m, k] (group 128, the options' layout, max and UE8M0)
/// in `arch`'s fp8 flavour (the options' format must match it).
pub fn quantize_tokens(arch: Arch, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
    const QOP: &str = "quant_per_token_group";
    if opts.group != kernels::SCALE_BLOCK {
        return Err(Error::Unsupported { path: QOP.into(), reason: format!("group {}; HIP kernels use 128", opts.group) });
    }
    if opts.format != arch.fp8() {
        return Err(Error::invalid(QOP, format!("format {:?} but {} produces {:?}", opts.format, arch.name(), arch.fp8())));
    }
    if m == 0 || k == 0 || x.len() != m.saturating_mul(k) {
        return Err(Error::shape(QOP, format!("x has {} values, expected M*K = {m}*{k} (both >= 1)", x.len())));
    }
    let fp8_max = opts.fp8_max.unwrap_or_else(|| opts.format.default_activation_max());
    if !(fp8_max > 0.0 && fp8_max <= opts.format.max_finite()) {
        return Err(Error::invalid(QOP, format!("fp8 max {fp8_max} must be in (0, {}] for {:?}", opts.format.max_finite(), opts.format)));
    }
    let groups = k.div_ceil(kernels::SCALE_BLOCK);
    let scale_len = opts.layout.scale_count(m, groups);
    let (sm, sg) = opts.layout.strides(m, groups);
    let mut q = vec![0xFFu8; m * k];
    // Column-major padding rows are not written by the kernel; they stay 0 as the CPU's.
    let mut s = vec![0.0f32; scale_len];
    if opts.layout == ScaleLayout::RowMajor {
        s.fill(f32::NAN);
    } else {
        for g in 0..groups {
            s[g * sg..g * sg + m].fill(f32::NAN); // sg = padded rows per group
        }
    }
    let grid = grid_u32((m * groups).div_ceil(kernels::QUANT_GROUPS_PER_BLOCK as usize), QOP)?;
    let _reg = Registered::new(&[
        (x.as_ptr() as *const c_void, x.len() * 4),
        (q.as_ptr() as *const c_void, q.len()),
        (s.as_ptr() as *const c_void, s.len() * 4),
    ]);
    let f = match arch {
        Arch::Gfx942 => emu_quant_per_token_group_gfx942,
        Arch::Gfx950 => emu_quant_per_token_group_gfx950,
    };
    // SAFETY: buffers sized per the kernel ABI; accesses are range-checked by the emulator.
    let rc = unsafe {
        f(x.as_ptr(), q.as_mut_ptr(), s.as_mut_ptr(), to_i32(m, "M")?, to_i32(k, "K")?, fp8_max, to_i32(sm, "stride")?, to_i32(sg, "stride")?, i32::from(opts.ue8m0), grid, 1, 1)
    };
    check(rc, QOP)?;
    Ok(QuantizedTokens { m, k, group: kernels::SCALE_BLOCK, format: opts.format, layout: opts.layout, q, scales: s })
}

/// `quant_weight_blocks` on `w` [n, k] with 128x128 blocks in `arch`'s flavour.
pub fn quantize_weight(arch: Arch, w: &[f32], n: usize, k: usize) -> Result<QuantizedWeight> {
    const QOP: &str = "quant_weight_blocks";
    if n == 0 || k == 0 || w.len() != n.saturating_mul(k) {
        return Err(Error::shape(QOP, format!("w has {} values, expected N*K = {n}*{k} (both >= 1)", w.len())));
    }
    let (nb, kb) = (n.div_ceil(128), k.div_ceil(128));
    let mut q = vec![0xFFu8; n * k];
    let mut s = vec![f32::NAN; nb * kb];
    let _reg = Registered::new(&[
        (w.as_ptr() as *const c_void, w.len() * 4),
        (q.as_ptr() as *const c_void, q.len()),
        (s.as_ptr() as *const c_void, s.len() * 4),
    ]);
    let f = match arch {
        Arch::Gfx942 => emu_quant_weight_blocks_gfx942,
        Arch::Gfx950 => emu_quant_weight_blocks_gfx950,
    };
    // SAFETY: as in quantize_tokens.
    let rc = unsafe { f(w.as_ptr(), q.as_mut_ptr(), s.as_mut_ptr(), to_i32(n, "N")?, to_i32(k, "K")?, grid_u32(kb, QOP)?, grid_u32(nb, QOP)?, 1) };
    check(rc, QOP)?;
    Ok(QuantizedWeight { n, k, block: (128, 128), format: arch.fp8(), q, scales: s })
}

/// `convert_e4m3fn_to_fnuz` in place (a gfx942 kernel), with `grid` workgroups.
pub fn convert_e4m3fn_to_fnuz(w: &mut [u8], scales: &mut [f32], grid: u32) -> Result<()> {
    if grid == 0 {
        return Err(Error::invalid(kernels::CONVERT_E4M3FN_TO_FNUZ, "grid must have at least one workgroup"));
    }
    let _reg = Registered::new(&[(w.as_ptr() as *const c_void, w.len()), (scales.as_ptr() as *const c_void, scales.len() * 4)]);
    // SAFETY: lengths passed match the slices; accesses are range-checked.
    let rc = unsafe { emu_convert_e4m3fn_to_fnuz_gfx942(w.as_mut_ptr(), w.len() as i64, scales.as_mut_ptr(), scales.len() as i64, grid, 1, 1) };
    check(rc, kernels::CONVERT_E4M3FN_TO_FNUZ)
}

/// Arguments of `scale_reduce_<out>` (see kernels::scale_reduce_symbol) over host slices.
pub struct ScaleReduceArgs<'a> {
    /// `[KB][rows][N]` fp32 partial products, `batch_stride` floats apart.
    pub partial: &'a [f32],
    pub batch_stride: usize,
    pub a_scales: &'a [f32],
    pub as_stride_m: usize,
    pub as_stride_kb: usize,
    /// Row-major [ceil(N/128), KB].
    pub b_scales: &'a [f32],
    pub m0: usize,
    pub rows: usize,
    pub m: usize,
    pub n: usize,
    pub kb: usize,
}

/// Runs `scale_reduce_<out>`; returns the whole [m, n] output with rows m0..m0+rows
/// written (the others stay NaN).
pub fn scale_reduce(arch: Arch, out: OutDtype, args: &ScaleReduceArgs) -> Result<Output> {
    const SOP: &str = "scale_reduce";
    let a = args;
    if a.rows == 0 || a.n == 0 || a.kb == 0 || a.m0 + a.rows > a.m {
        return Err(Error::shape(SOP, format!("rows {}..{} of M={}, N={}, KB={}", a.m0, a.m0 + a.rows, a.m, a.n, a.kb)));
    }
    if a.partial.len() < (a.kb - 1) * a.batch_stride + a.rows * a.n || a.b_scales.len() != a.n.div_ceil(128) * a.kb {
        return Err(Error::shape(SOP, "partial or weight scales too short for rows x N x KB".to_string()));
    }
    let last_scale = (a.m0 + a.rows - 1) * a.as_stride_m + (a.kb - 1) * a.as_stride_kb;
    if last_scale >= a.a_scales.len() {
        return Err(Error::shape(SOP, format!("activation scales have {} values, the strides reach index {last_scale}", a.a_scales.len())));
    }
    let mut c = vec![0xFFu8; a.m * a.n * out.bytes()];
    let _reg = Registered::new(&[
        (a.partial.as_ptr() as *const c_void, a.partial.len() * 4),
        (a.a_scales.as_ptr() as *const c_void, a.a_scales.len() * 4),
        (a.b_scales.as_ptr() as *const c_void, a.b_scales.len() * 4),
        (c.as_ptr() as *const c_void, c.len()),
    ]);
    let f = scale_reduce_fn(arch, out);
    let grid = grid_u32((a.rows * a.n).div_ceil(256), SOP)?;
    // SAFETY: lengths checked above; accesses are range-checked by the emulator.
    let rc = unsafe {
        f(
            a.partial.as_ptr(),
            a.batch_stride as i64,
            a.a_scales.as_ptr(),
            a.b_scales.as_ptr(),
            c.as_mut_ptr() as *mut c_void,
            to_i32(a.m0, "m0")?,
            to_i32(a.rows, "rows")?,
            to_i32(a.n, "N")?,
            to_i32(a.kb, "KB")?,
            to_i32(a.as_stride_m, "stride")?,
            to_i32(a.as_stride_kb, "stride")?,
            grid,
            1,
            1,
        )
    };
    check(rc, kernels::scale_reduce_symbol(out))?;
    Ok(bytes_to_output(out, &c))
}

/// One emulated MFMA on explicit lane operands: `shape` 32 (32x32x16, 16 accumulator
/// floats per lane) or 16 (16x16x32, 4 per lane); `c` is lane-major (lane * acc + r).
pub fn mfma_lanes(arch: Arch, shape: u32, a: &[u64; 64], b: &[u64; 64], c: &[f32]) -> Result<Vec<f32>> {
    let acc = match shape {
        32 => 16,
        16 => 4,
        _ => return Err(Error::invalid(OP, format!("MFMA shape {shape} (expected 16 or 32)"))),
    };
    if c.len() != 64 * acc {
        return Err(Error::shape(OP, format!("accumulator has {} floats, expected {}", c.len(), 64 * acc)));
    }
    let mut d = vec![0.0f32; 64 * acc];
    // SAFETY: a, b have 64 lanes; c, d have 64 * acc floats.
    let rc = unsafe { emu_mfma_lanes(shape as i32, arch.flavour(), a.as_ptr(), b.as_ptr(), c.as_ptr(), d.as_mut_ptr()) };
    if rc != 0 {
        return Err(Error::invalid(OP, "emu_mfma_lanes rejected its arguments"));
    }
    Ok(d)
}

/// The emulated `v_cvt_pk_fp8_f32` (round to nearest even, NaN beyond the finite max).
pub fn cvt_pk_fp8_f32(arch: Arch, a: f32, b: f32, old: u32, word_sel: bool) -> u32 {
    // SAFETY: pure function.
    unsafe { emu_cvt_pk_fp8_f32(arch.flavour(), a, b, old as i32, i32::from(word_sel)) as u32 }
}

/// The emulated `v_cvt_f32_fp8` of byte `byte_sel` of `src`.
pub fn cvt_f32_fp8(arch: Arch, src: u32, byte_sel: u32) -> f32 {
    // SAFETY: pure function.
    unsafe { emu_cvt_f32_fp8(arch.flavour(), src as i32, byte_sel as i32) }
}

/// Self-tests of the emulated execution model (barriers, wave shuffles, error detection),
/// for tests/hip_emulated.rs.
#[doc(hidden)]
pub mod selftest {
    use super::*;

    extern "C" {
        fn emu_selftest_barrier(out: *mut i32, threads: u32, groups: u32) -> i32;
        fn emu_selftest_shfl(input: *const f32, max_out: *mut f32, xor5_out: *mut f32) -> i32;
        fn emu_selftest_divergent() -> i32;
        fn emu_selftest_out_of_range(p: *const f32, n: i32) -> i32;
    }

    /// out[g * threads + t] = what work-item t of group g read from LDS slot t+1 after the barrier.
    pub fn barrier(threads: u32, groups: u32) -> Result<Vec<i32>> {
        let mut out = vec![-1i32; (threads * groups) as usize];
        let _reg = Registered::new(&[]);
        // SAFETY: out has threads * groups entries.
        check(unsafe { emu_selftest_barrier(out.as_mut_ptr(), threads, groups) }, "selftest_barrier")?;
        Ok(out)
    }

    /// (wave max of input per lane, input[lane ^ 5]) for 128 work-items (two waves).
    pub fn shuffles(input: &[f32; 128]) -> Result<(Vec<f32>, Vec<f32>)> {
        let (mut mx, mut x5) = (vec![0.0f32; 128], vec![0.0f32; 128]);
        let _reg = Registered::new(&[]);
        // SAFETY: all three buffers have 128 floats.
        check(unsafe { emu_selftest_shfl(input.as_ptr(), mx.as_mut_ptr(), x5.as_mut_ptr()) }, "selftest_shfl")?;
        Ok((mx, x5))
    }

    /// Divergent wave: returns the emulator's error.
    pub fn divergent() -> Result<()> {
        // SAFETY: no arguments.
        check(unsafe { emu_selftest_divergent() }, "selftest_divergent")
    }

    /// Reads `data[n]` (one past the end) with `data` registered: returns the emulator's error.
    pub fn out_of_range(data: &[f32]) -> Result<()> {
        let _reg = Registered::new(&[(data.as_ptr() as *const c_void, data.len() * 4)]);
        // SAFETY: the kernel reads p[0..=n]; p[n] is caught by the range check before any read.
        check(unsafe { emu_selftest_out_of_range(data.as_ptr(), data.len() as i32) }, "selftest_out_of_range")
    }
}

/// The GEMM kernels the emulation library carries.
pub fn emulated_gemm_kernels() -> Vec<GemmKernel> {
    kernels::gemm_kernels().into_iter().filter(|k| k.emulated).collect()
}

/// Launches on the emulated device from packed kernel arguments (device addresses are host
/// addresses there): what the HIP backend's device-API path calls. Each launch registers the
/// extents its arguments imply, so an access outside them is an error.
pub(super) mod launch {
    use super::*;
    use crate::backend::hip::abi;
    use crate::backend::hip::runtime::DevicePtr;
    use crate::backend::hip::vendor_plan::{simulate, BatchedGemm};
    use crate::types::InputDtype;

    fn ptr<T>(p: DevicePtr<T>) -> *const c_void {
        p.as_raw() as *const c_void
    }

    /// Floats a strided scale array reaches for `rows` x `cols` at (sm, sc), from element 0.
    fn strided_extent(rows: i32, cols: i32, sm: i32, sc: i32) -> usize {
        if rows <= 0 || cols <= 0 {
            return 0;
        }
        ((rows - 1) as usize) * sm.max(0) as usize + ((cols - 1) as usize) * sc.max(0) as usize + 1
    }

    /// # Safety
    /// The arguments' addresses must hold the extents their sizes imply.
    pub unsafe fn gemm(arch: Arch, kernel: &GemmKernel, grid: (u32, u32), a: &abi::GemmArgs) -> Result<()> {
        let f = emu_gemm_fn(arch, kernel)?;
        let (m, n, k) = (a.m as usize, a.n as usize, a.k as usize);
        let kb = k.div_ceil(kernels::SCALE_BLOCK) as i32;
        let _reg = Registered::new(&[
            (ptr(a.a), m * k),
            (ptr(a.b), n * k),
            (ptr(a.a_scales), 4 * strided_extent(a.m, kb, a.as_stride_m, a.as_stride_kb)),
            (ptr(a.b_scales), 4 * n.div_ceil(kernels::SCALE_BLOCK) * kb as usize),
            (ptr(a.c), m * n * kernel.out.bytes()),
            (ptr(a.workspace), kernel.workspace_bytes(m, n, a.k_splits.max(1) as u32)),
        ]);
        let rc = f(
            a.a.as_raw() as *const u8,
            a.a_scales.as_raw() as *const f32,
            a.b.as_raw() as *const u8,
            a.b_scales.as_raw() as *const f32,
            a.c.as_raw(),
            a.m,
            a.n,
            a.k,
            a.as_stride_m,
            a.as_stride_kb,
            a.group_m,
            a.k_splits,
            a.workspace.as_raw(),
            grid.0,
            grid.1,
            1,
        );
        check(rc, kernel.symbol)
    }

    /// # Safety
    /// As [`gemm`].
    pub unsafe fn scale_reduce(arch: Arch, out: OutDtype, grid: u32, a: &abi::ScaleReduceArgs) -> Result<()> {
        let r = &a.plan;
        let f = scale_reduce_fn(arch, out);
        let (rows, n, kb) = (r.rows.max(0) as usize, r.n.max(0) as usize, r.kb.max(0) as usize);
        let _reg = Registered::new(&[
            (ptr(a.partial), 4 * ((kb.saturating_sub(1)) * r.batch_stride.max(0) as usize + rows * n)),
            (ptr(a.a_scales), 4 * strided_extent(r.m0 + r.rows, r.kb, r.as_stride_m, r.as_stride_kb)),
            (ptr(a.b_scales), 4 * n.div_ceil(kernels::SCALE_BLOCK) * kb),
            (ptr(a.c), (r.m0.max(0) as usize + rows) * n * out.bytes()),
        ]);
        let rc = f(a.partial.as_raw() as *const f32, r.batch_stride, a.a_scales.as_raw() as *const f32, a.b_scales.as_raw() as *const f32, a.c.as_raw(), r.m0, r.rows, r.n, r.kb, r.as_stride_m, r.as_stride_kb, grid, 1, 1);
        check(rc, kernels::scale_reduce_symbol(out))
    }

    /// # Safety
    /// As [`gemm`].
    pub unsafe fn quant_tokens(arch: Arch, input: InputDtype, grid: u32, a: &abi::QuantTokensArgs) -> Result<()> {
        let (m, k) = (a.m as usize, a.k as usize);
        let groups = k.div_ceil(kernels::SCALE_BLOCK) as i32;
        let _reg = Registered::new(&[(ptr(a.x), input.elem().bytes() * m * k), (ptr(a.q), m * k), (ptr(a.s), 4 * strided_extent(a.m, groups, a.s_stride_m, a.s_stride_g))]);
        let (x, q, s) = (a.x.as_raw(), a.q.as_raw() as *mut u8, a.s.as_raw() as *mut f32);
        let rc = match (input, arch) {
            (InputDtype::F32, Arch::Gfx942) => emu_quant_per_token_group_gfx942(x as *const f32, q, s, a.m, a.k, a.fp8_max, a.s_stride_m, a.s_stride_g, a.ue8m0, grid, 1, 1),
            (InputDtype::F32, Arch::Gfx950) => emu_quant_per_token_group_gfx950(x as *const f32, q, s, a.m, a.k, a.fp8_max, a.s_stride_m, a.s_stride_g, a.ue8m0, grid, 1, 1),
            (InputDtype::Bf16, Arch::Gfx942) => emu_quant_per_token_group_bf16_gfx942(x as *const u16, q, s, a.m, a.k, a.fp8_max, a.s_stride_m, a.s_stride_g, a.ue8m0, grid, 1, 1),
            (InputDtype::Bf16, Arch::Gfx950) => emu_quant_per_token_group_bf16_gfx950(x as *const u16, q, s, a.m, a.k, a.fp8_max, a.s_stride_m, a.s_stride_g, a.ue8m0, grid, 1, 1),
            (InputDtype::F16, Arch::Gfx942) => emu_quant_per_token_group_f16_gfx942(x as *const u16, q, s, a.m, a.k, a.fp8_max, a.s_stride_m, a.s_stride_g, a.ue8m0, grid, 1, 1),
            (InputDtype::F16, Arch::Gfx950) => emu_quant_per_token_group_f16_gfx950(x as *const u16, q, s, a.m, a.k, a.fp8_max, a.s_stride_m, a.s_stride_g, a.ue8m0, grid, 1, 1),
        };
        check(rc, kernels::QUANT_PER_TOKEN_GROUP)
    }

    /// # Safety
    /// As [`gemm`].
    pub unsafe fn quant_weight(arch: Arch, input: InputDtype, grid: (u32, u32), a: &abi::QuantWeightArgs) -> Result<()> {
        let (n, k) = (a.n as usize, a.k as usize);
        let _reg = Registered::new(&[(ptr(a.w), input.elem().bytes() * n * k), (ptr(a.q), n * k), (ptr(a.s), 4 * n.div_ceil(128) * k.div_ceil(128))]);
        let (w, q, s) = (a.w.as_raw(), a.q.as_raw() as *mut u8, a.s.as_raw() as *mut f32);
        let rc = match (input, arch) {
            (InputDtype::F32, Arch::Gfx942) => emu_quant_weight_blocks_gfx942(w as *const f32, q, s, a.n, a.k, grid.0, grid.1, 1),
            (InputDtype::F32, Arch::Gfx950) => emu_quant_weight_blocks_gfx950(w as *const f32, q, s, a.n, a.k, grid.0, grid.1, 1),
            (InputDtype::Bf16, Arch::Gfx942) => emu_quant_weight_blocks_bf16_gfx942(w as *const u16, q, s, a.n, a.k, grid.0, grid.1, 1),
            (InputDtype::Bf16, Arch::Gfx950) => emu_quant_weight_blocks_bf16_gfx950(w as *const u16, q, s, a.n, a.k, grid.0, grid.1, 1),
            (InputDtype::F16, Arch::Gfx942) => emu_quant_weight_blocks_f16_gfx942(w as *const u16, q, s, a.n, a.k, grid.0, grid.1, 1),
            (InputDtype::F16, Arch::Gfx950) => emu_quant_weight_blocks_f16_gfx950(w as *const u16, q, s, a.n, a.k, grid.0, grid.1, 1),
        };
        check(rc, kernels::QUANT_WEIGHT_BLOCKS)
    }

    /// # Safety
    /// As [`gemm`].
    pub unsafe fn convert_to_fnuz(arch: Arch, grid: u32, a: &abi::ConvertFnuzArgs) -> Result<()> {
        if arch != Arch::Gfx942 {
            return Err(Error::Unsupported { path: kernels::CONVERT_E4M3FN_TO_FNUZ.into(), reason: format!("{} reads OCP e4m3fn: nothing to convert", arch.name()) });
        }
        let _reg = Registered::new(&[(ptr(a.w), a.n_bytes.max(0) as usize), (ptr(a.s), 4 * a.n_scales.max(0) as usize)]);
        let rc = emu_convert_e4m3fn_to_fnuz_gfx942(a.w.as_raw() as *mut u8, a.n_bytes, a.s.as_raw() as *mut f32, a.n_scales, grid, 1, 1);
        check(rc, kernels::CONVERT_E4M3FN_TO_FNUZ)
    }

    /// rocBLAS's documented semantics of one planned call (fp8 inputs decoded exactly, sums in
    /// f64, stored as f32): the emulated device's stand-in for the library.
    ///
    /// # Safety
    /// The weight, activation and workspace addresses must hold the call's extents.
    pub unsafe fn vendor_gemm(arch: Arch, call: &BatchedGemm, weight: *const u8, act: *const u8, work: *mut f32) -> Result<()> {
        let (ea, eb, ed) = call.extents();
        let table = arch.fp8().decode_table();
        let w: Vec<f64> = std::slice::from_raw_parts(weight, ea).iter().map(|&b| table[b as usize] as f64).collect();
        let x: Vec<f64> = std::slice::from_raw_parts(act, eb).iter().map(|&b| table[b as usize] as f64).collect();
        let out = std::slice::from_raw_parts_mut(work, ed);
        let mut d: Vec<f64> = out.iter().map(|&v| v as f64).collect();
        simulate::strided_batched_gemm(call, &w, &x, &mut d).map_err(|reason| Error::Device { backend: "rocm-emulated", call: "rocblas_gemm_strided_batched_ex3".into(), reason })?;
        for (o, v) in out.iter_mut().zip(d) {
            *o = v as f32;
        }
        Ok(())
    }
}
