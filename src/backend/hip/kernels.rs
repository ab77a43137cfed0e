//! The HIP kernels this build carries: one raw code object per AMD architecture (from
//! `hip/*.hip`, compiled by `hip/build_hip.rs`), the GEMM instantiations inside them, and
//! the symbol names of the other kernels. The kernel ABI (arguments, grid, block) is in
//! the doc of each constant and in the header comment of each `hip/<op>.hip`.
//!
//! GEMM symbol rule: `gemm_block_fp8_<tag>_<out>`, tag = [`kernel_tag`], e.g.
//! `gemm_block_fp8_m64n128k128w4s2i32_bf16`. GROUP_SIZE_M is not in the tag: the kernel
//! takes it as its last argument ([`GemmKernel::group_m`]).
//!
//! How a config's AMD keys map onto the kernel (vLLM's Triton keys, so that a vLLM
//! AMD_Instinct_MI300X / MI325X file runs its own tiles):
//! - `BLOCK_SIZE_M/N/K`, `num_warps`: the instantiation (must be compiled, see
//!   hip/README.md for the default set; `tuning-full` adds vLLM's search space);
//! - `matrix_instr_nonkdim`: 16 -> v_mfma_f32_16x16x32_fp8_fp8, 32 -> 32x32x16; absent or 0
//!   (Triton's "choose"): 32 where the waves tile with it, else 16; any other value (4) is
//!   refused;
//! - `num_stages`: absent, 0, 1 or 2 run the kernel's one pipeline (one LDS buffer, the next
//!   K tile prefetched into registers: what Triton's num_stages 2 builds on AMD); 3 or more
//!   (deeper register pipelines) are not implemented and refused;
//! - `kpack` (1 or 2) and `waves_per_eu` (0 to 8): scheduling hints for Triton's codegen
//!   with no effect on the result; the kernel reads 16-byte fragments whatever `kpack`
//!   says, and its occupancy comes from its registers and LDS (reported statically);
//!   other values are refused;
//! - `GROUP_SIZE_M`: passed at launch.

use crate::config::KernelConfig;
use crate::gemm::OutDtype;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/hip_kernels.rs"));
}

/// The static-report parser and bounds the build applies (hip/static_report.rs).
#[path = "../../../hip/static_report.rs"]
pub mod static_report;

/// Scale block the GPU kernels support: (128, 128) weights, 1 x 128 activations.
pub const SCALE_BLOCK: usize = 128;

/// `quant_per_token_group(const float* x, uint8_t* q, float* s, int M, int K, float fp8_max,
/// int s_stride_m, int s_stride_g, int ue8m0)`: block 256 (4 groups of 128, one wave each),
/// grid.x = ceil(M * ceil(K/128) / 4).
pub const QUANT_PER_TOKEN_GROUP: &str = "quant_per_token_group";
/// `quant_weight_blocks(const float* w, uint8_t* q, float* s, int N, int K)`: block 256,
/// grid (ceil(K/128), ceil(N/128)).
pub const QUANT_WEIGHT_BLOCKS: &str = "quant_weight_blocks";
/// `convert_e4m3fn_to_fnuz(uint8_t* w, long long n_bytes, float* s, long long n_scales)`:
/// block 256, any grid (grid-stride loops).
pub const CONVERT_E4M3FN_TO_FNUZ: &str = "convert_e4m3fn_to_fnuz";
/// Threads per workgroup of the quantization, conversion and scale_reduce kernels.
pub const AUX_THREADS: u32 = 256;
/// Token groups per workgroup of `quant_per_token_group`.
pub const QUANT_GROUPS_PER_BLOCK: u32 = 4;

/// `scale_reduce_<out>(const float* partial, long long batch_stride, const float* a_scales,
/// const float* b_scales, void* c, int m0, int rows, int N, int KB, int as_stride_m,
/// int as_stride_kb)`: block 256, grid.x = ceil(rows*N/256).
pub fn scale_reduce_symbol(out: OutDtype) -> &'static str {
    match out {
        OutDtype::Bf16 => "scale_reduce_bf16",
        OutDtype::F16 => "scale_reduce_f16",
        OutDtype::F32 => "scale_reduce_f32",
    }
}

/// The raw ELF code object for `arch` ("gfx942", "gfx950"), if this build compiled it.
pub fn code_object(arch: &str) -> Option<&'static [u8]> {
    generated::CODE_OBJECTS.iter().find(|(a, _)| *a == arch).map(|(_, co)| *co)
}

/// Architectures this build has code objects for.
pub fn compiled_archs() -> Vec<&'static str> {
    generated::CODE_OBJECTS.iter().map(|(a, _)| *a).collect()
}

/// The compiler's resource report (one line per architecture and kernel).
pub fn resource_report() -> &'static str {
    generated::RESOURCE_REPORT
}

/// The static report of every GEMM kernel (markdown table, see hip/static_report.rs).
pub fn static_report() -> &'static str {
    generated::STATIC_REPORT
}

/// (arch, path) of the assembly listings the code objects were assembled from (build
/// outputs in OUT_DIR: present on the machine that built this crate).
pub fn listings() -> &'static [(&'static str, &'static str)] {
    generated::LISTINGS
}

/// One compiled GEMM instantiation and how to launch it: block.x = `threads`,
/// grid.x = [`GemmKernel::grid_x`], static LDS only (no dynamic shared memory), and
/// `group_m` as the kernel's last argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmKernel {
    pub block_m: u32,
    pub block_n: u32,
    pub block_k: u32,
    pub group_m: u32,
    pub num_warps: u32,
    /// Always 2: one LDS buffer and one K tile prefetched into registers.
    pub num_stages: u32,
    /// 32: v_mfma_f32_32x32x16_fp8_fp8, 16: v_mfma_f32_16x16x32_fp8_fp8.
    pub mfma_nonkdim: u32,
    pub out: OutDtype,
    pub symbol: &'static str,
    pub threads: u32,
    /// Static LDS of the kernel: one buffer of (BLOCK_M + BLOCK_N) * BLOCK_K bytes.
    pub lds_bytes: u32,
    /// Whether the host emulation library has this instantiation (src/backend/hip/emulator.rs).
    pub emulated: bool,
    /// In the default build (CI), not only in `tuning-full`.
    pub default_set: bool,
    /// K splits fixed by the config (`SPLIT_K`); 0: [`GemmKernel::k_splits`]'s rule.
    pub split_k: u32,
}

impl GemmKernel {
    /// grid.x for an M x N output (tiles; the kernel maps them in GROUP_SIZE_M order).
    pub fn grid_x(&self, m: usize, n: usize) -> u32 {
        (m.div_ceil(self.block_m as usize) * n.div_ceil(self.block_n as usize)) as u32
    }

    /// The config this kernel implements (with its GROUP_SIZE_M), every AMD key explicit.
    pub fn config(&self) -> KernelConfig {
        KernelConfig {
            block_m: self.block_m,
            block_n: self.block_n,
            block_k: self.block_k,
            group_m: self.group_m,
            num_warps: self.num_warps,
            num_stages: Some(self.num_stages),
            matrix_instr_nonkdim: Some(self.mfma_nonkdim),
            kpack: None,
            waves_per_eu: None,
            extra: if self.split_k > 0 {
                [(crate::config::SPLIT_K_KEY.to_string(), serde_json::Value::from(self.split_k))].into_iter().collect()
            } else {
                Default::default()
            },
        }
    }
}

impl GemmKernel {
    /// The `group_m` launch argument (GROUP_SIZE_M; 0 counts as 1 in the kernel).
    pub fn group_m_arg(&self) -> i32 {
        self.group_m.min(i32::MAX as u32) as i32
    }

    /// K splits (grid.y) for an M x N x K product on `compute_units` CUs: the config's
    /// `SPLIT_K` if it fixed one, else split only when the tiles cannot fill the CUs (small
    /// M): as many splits as it takes to reach one workgroup per CU, at most 16, and each
    /// split keeps at least 4 K tiles (the partials cost M*N*4 bytes of traffic per split).
    /// Clamped to the K tiles there are.
    pub fn k_splits(&self, m: usize, n: usize, k: usize, compute_units: u32) -> u32 {
        let iters = k.div_ceil(self.block_k as usize).max(1);
        let want = if self.split_k > 0 {
            self.split_k as usize
        } else {
            let tiles = self.grid_x(m, n).max(1) as usize;
            let cus = compute_units.max(1) as usize;
            if tiles >= cus {
                1
            } else {
                cus.div_ceil(tiles).min(16).min(iters / 4).max(1)
            }
        };
        want.clamp(1, iters) as u32
    }

    /// Everything a launch of this kernel on an M x N x K product needs besides its buffers:
    /// grid (tiles, K splits, 1), block, the `k_splits` argument and the zeroed workspace
    /// bytes (0: pass a null workspace).
    pub fn launch(&self, m: usize, n: usize, k: usize, compute_units: u32) -> GemmLaunch {
        let splits = self.k_splits(m, n, k, compute_units);
        GemmLaunch { grid: (self.grid_x(m, n), splits, 1), block: self.threads, k_splits: splits, workspace_bytes: self.workspace_bytes(m, n, splits) }
    }

    /// Workspace bytes for `splits` > 1: the fp32 partials of every split, then one u32
    /// counter per output tile (zero before the first launch; the kernel leaves them zero).
    pub fn workspace_bytes(&self, m: usize, n: usize, splits: u32) -> usize {
        if splits <= 1 {
            0
        } else {
            splits as usize * m * n * 4 + self.grid_x(m, n) as usize * 4
        }
    }
}

/// See [`GemmKernel::launch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmLaunch {
    pub grid: (u32, u32, u32),
    pub block: u32,
    pub k_splits: u32,
    /// Bytes of workspace, zero before the first launch that uses it (the kernel leaves it
    /// zero, so one zeroed workspace serves every later launch on the same stream).
    pub workspace_bytes: usize,
}

fn out_dtype(name: &str) -> OutDtype {
    match name {
        "bf16" => OutDtype::Bf16,
        "f16" => OutDtype::F16,
        _ => OutDtype::F32,
    }
}

/// Every GEMM instantiation in the code objects (the default set, plus the bf16 tuning
/// candidates with feature `tuning-full`), with GROUP_SIZE_M 1.
pub fn gemm_kernels() -> Vec<GemmKernel> {
    generated::GEMM_INSTANCES
        .iter()
        .map(|&(symbol, bm, bn, bk, w, i, out, emulated, default_set)| GemmKernel {
            block_m: bm,
            block_n: bn,
            block_k: bk,
            group_m: 1,
            num_warps: w,
            num_stages: 2,
            mfma_nonkdim: i,
            out: out_dtype(out),
            symbol,
            threads: w * 64,
            lds_bytes: (bm + bn) * bk,
            emulated,
            default_set,
            split_k: 0,
        })
        .collect()
}

/// Whether `num_warps` waves can split a BM x BN tile into whole nonkdim x nonkdim MFMA
/// tiles (the kernel's static_assert).
fn waves_tile(bm: u32, bn: u32, warps: u32, nonkdim: u32) -> bool {
    (0..4).map(|p| 1u32 << p).filter(|wn| *wn <= warps).any(|wn| {
        let wm = warps / wn;
        wm * wn == warps && bn % (wn * nonkdim) == 0 && bm % (wm * nonkdim) == 0
    })
}

/// The MFMA shape a config runs on: its `matrix_instr_nonkdim`, or (key absent or 0) 32
/// where the waves can tile with 32x32 MFMAs, else 16.
pub fn mfma_nonkdim(cfg: &KernelConfig) -> u32 {
    // 0 is Triton's "let the compiler choose", the same as no key.
    match cfg.matrix_instr_nonkdim {
        Some(nk) if nk != 0 => nk,
        _ => if waves_tile(cfg.block_m, cfg.block_n, cfg.num_warps, 32) { 32 } else { 16 },
    }
}

/// `m{BM}n{BN}k{BK}w{W}s2i{I}` (I as in [`mfma_nonkdim`]). GROUP_SIZE_M, `num_stages` (0-2),
/// `kpack` and `waves_per_eu` do not select another kernel (module doc).
pub fn kernel_tag(cfg: &KernelConfig) -> String {
    format!("m{}n{}k{}w{}s2i{}", cfg.block_m, cfg.block_n, cfg.block_k, cfg.num_warps, mfma_nonkdim(cfg))
}

/// Why the AMD keys of `cfg` cannot be honoured by any kernel of this design (None: they can).
pub fn amd_key_problem(cfg: &KernelConfig) -> Option<String> {
    if let Some(nk) = cfg.matrix_instr_nonkdim {
        if nk != 0 && nk != 16 && nk != 32 {
            return Some(format!("matrix_instr_nonkdim {nk}: the HIP kernels implement 16 (v_mfma_f32_16x16x32_fp8) and 32 (v_mfma_f32_32x32x16_fp8)"));
        }
    }
    if let Some(s) = cfg.num_stages {
        if s > 2 {
            return Some(format!("num_stages {s}: the HIP kernel has one pipeline (one LDS buffer, one K tile prefetched into registers = num_stages 2); deeper ones are not implemented"));
        }
    }
    if let Some(k) = cfg.kpack {
        if k != 1 && k != 2 {
            return Some(format!("kpack {k}: Triton accepts 1 or 2"));
        }
    }
    if let Some(w) = cfg.waves_per_eu {
        if w > 8 {
            return Some(format!("waves_per_eu {w}: a SIMD runs at most 8 waves"));
        }
    }
    None
}

/// The compiled kernel for `cfg` and `out` (with the config's GROUP_SIZE_M), or why there
/// is none: an AMD key no kernel honours, or a tile this build did not compile.
pub fn resolve_gemm(cfg: &KernelConfig, out: OutDtype) -> Result<GemmKernel, String> {
    if let Some(why) = amd_key_problem(cfg) {
        return Err(format!("config {}: {why}", cfg.short()));
    }
    let symbol = format!("gemm_block_fp8_{}_{}", kernel_tag(cfg), out.name());
    match gemm_kernels().into_iter().find(|k| k.symbol == symbol) {
        Some(mut k) => {
            k.group_m = cfg.group_m.max(1);
            k.split_k = cfg.extra.get(crate::config::SPLIT_K_KEY).and_then(|v| v.as_u64()).map_or(0, |v| v.min(1024) as u32);
            Ok(k)
        }
        None => Err(format!(
            "config {} needs HIP kernel {symbol}, which this build does not have (the default build has vLLM's MI300X/MI325X tiles for bf16; feature `tuning-full` adds the search space)",
            cfg.short()
        )),
    }
}

/// The compiled kernel for `cfg` and `out`, if this build has it ([`resolve_gemm`]).
pub fn find_gemm(cfg: &KernelConfig, out: OutDtype) -> Option<GemmKernel> {
    resolve_gemm(cfg, out).ok()
}

/// The kernel's default config (used when no tuned file matches and the vendor path is
/// unavailable): vLLM's default tile 64 x 128 x 128, 4 waves, on 32x32x16 MFMAs,
/// GROUP_SIZE_M 8.
pub fn default_gemm_config() -> KernelConfig {
    KernelConfig {
        block_m: 64,
        block_n: 128,
        block_k: 128,
        group_m: 8,
        num_warps: 4,
        num_stages: Some(2),
        matrix_instr_nonkdim: Some(32),
        kpack: None,
        waves_per_eu: None,
        extra: Default::default(),
    }
}
