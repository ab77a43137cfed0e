//! The kernels this build embeds (generated index from cuda/build_cuda.rs) and the rules that
//! map a `KernelConfig` to a compiled GEMM instantiation.
//!
//! Symbols: `sm90_gemm_block_fp8_m{BM}n{BN}w{WARPS}s{STAGES}[c2|c2k]_{bf16|f16|f32}` (TMA body
//! on sm_90a with 3+ stages for BM 64/128 with 4 warps per 64 rows, `c2` in clusters of two
//! (`CLUSTER_KEY`), `c2k` pairs that split each tile's K range (`CLUSTER_SPLITS_K_KEY`), and
//! swapped for BM 16/32/64 with 4 warps per 64 columns (m64n128w8); mma.sync otherwise),
//! `sm90_quant_per_token_group_{bf16|f16|f32}_gx{16|8|4}`, `sm90_quant_weight_blocks_{f32|bf16|f16}`,
//! `sm90_act_scales_to_column_major`.
//! GROUP_SIZE_M is a kernel argument (it only reorders tiles), not a template parameter.

use crate::config::{KernelConfig, CLUSTER_KEY, CLUSTER_SPLITS_K_KEY};
use crate::types::{GemmShape, InputDtype, OutDtype};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/cuda_kernels.rs"));
}
pub use generated::{CubinImage, GemmInstance, CUBINS, GEMM_INSTANCES, RESOURCE_REPORT};

pub const QUANT_MODULE: &str = "quant_per_token_group";
pub const WEIGHT_QUANT_MODULE: &str = "quant_weight_blocks";
pub const SCALE_LAYOUT_MODULE: &str = "scale_layout";
pub const SCALE_LAYOUT_SYMBOL: &str = "sm90_act_scales_to_column_major";
pub const SPLITK_MODULE: &str = "splitk_convert";
/// The benchmark's bytes floor (reads A and B, writes C, no math).
pub const TRAFFIC_FLOOR_MODULE: &str = "traffic_floor";
pub const TRAFFIC_FLOOR_SYMBOL: &str = "sm90_traffic_floor";
/// `KernelConfig::extra` key fixing the number of K splits (otherwise chosen by `split_k`).
pub use crate::config::SPLIT_K_KEY;

pub fn splitk_convert_symbol(out: OutDtype) -> &'static str {
    match out {
        OutDtype::Bf16 => "sm90_splitk_convert_bf16",
        OutDtype::F16 => "sm90_splitk_convert_f16",
        OutDtype::F32 => "sm90_splitk_convert_f32",
    }
}

/// Work items per K split of a `block_m` x `block_n` tile on `shape`: its tiles, or in
/// clusters its groups of `cluster` vertically adjacent tiles (the TMA kernel's `item`).
pub fn tile_groups(block_m: u32, block_n: u32, cluster: u32, shape: &GemmShape) -> usize {
    shape.m.div_ceil(block_m.max(1) as usize * cluster.max(1) as usize) * shape.n.div_ceil(block_n.max(1) as usize)
}

/// How the TMA kernel's stages receive their activation scales (`bfp8::AsLoad` in
/// cuda/gemm_sm90_tma.cuh): by TMA when the layout allows one (16-byte aligned base and pitch,
/// one stride 1), else by 4-byte cp.async from any strides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ScaleLoad {
    CpAsync = launch_abi::AS_CP_ASYNC,
    /// Row-major: a box of 4 K blocks x BM rows.
    TmaRows = launch_abi::AS_TMA_ROWS,
    /// Column-major: a box of BM rows of one K block.
    TmaCols = launch_abi::AS_TMA_COLS,
}

/// The kernel's `as_load` encoding, checked against its header at build time.
#[path = "../../../cuda/launch_abi.rs"]
mod launch_abi;
/// K blocks of the per-tile activation-scale slab of the one-consumer deep-ring tiles
/// (TmaTile::SLAB_KB).
pub use launch_abi::{C_BOX_ROWS, C_LAST_BOX_ROWS, SCALE_SLAB_K_BLOCKS};

/// The K blocks of the per-tile activation-scale box (the slab of TmaTile::AS_SLAB tiles) for
/// scales loaded by `load` from an M x `kb` grid split in `splits` parts; None when a part's
/// range does not fit (SCALE_SLAB_K_BLOCKS) or the scales come by cp.async, and the stages
/// take them one by one. A row-major box starts on the 16-byte boundary (4 blocks) at or below
/// its part's first block, so it spans up to 3 more blocks unless parts start on one; it is
/// whole 16-byte pieces wide and no wider than the tensor's `kb` (a wider box makes an invalid
/// map).
pub fn scale_slab_k_blocks(load: ScaleLoad, kb: usize, splits: usize) -> Option<u32> {
    let splits = splits.max(1);
    let per_part = kb.div_ceil(splits);
    let k_blocks = match load {
        ScaleLoad::CpAsync => return None,
        ScaleLoad::TmaRows if splits > 1 && per_part % 4 != 0 => (per_part + 3).next_multiple_of(4),
        ScaleLoad::TmaRows => per_part.next_multiple_of(4),
        ScaleLoad::TmaCols => per_part,
    };
    (k_blocks <= kb && k_blocks <= SCALE_SLAB_K_BLOCKS).then_some(k_blocks as u32)
}

/// The TMA kernel's `as_load` argument: the load mode, and for a tile's slab its box's K
/// blocks and whether the weight scales (at `bs_addr`, `kb` per weight-scale block row) come
/// by one bulk copy, which needs a 16-byte aligned base and row pitch (`bfp8::AsLoad`).
pub fn scale_load_arg(load: ScaleLoad, slab_k_blocks: Option<u32>, bs_addr: u64, kb: usize) -> i32 {
    match slab_k_blocks {
        None => load as i32,
        Some(k_blocks) => {
            let bulk = bs_addr % 16 == 0 && kb % 4 == 0;
            load as i32 | if bulk { launch_abi::AS_BS_BULK } else { 0 } | (k_blocks as i32) << launch_abi::AS_SLAB_SHIFT
        }
    }
}

/// The box width (columns) of the TMA store of C, when the kernel stores C that way: on tiles
/// with a C buffer (`c_box`, GemmInstance::c_box; 0 = none), for 16-bit C without a K split
/// (splits add fp32 into the workspace), whose rows start on 16-byte boundaries (TMA needs a
/// 16-byte aligned base and pitch). Otherwise the warps store C themselves.
pub fn c_store_box(c_box: u32, out: OutDtype, splits: u32, n: usize, c_addr: u64) -> Option<u32> {
    let aligned = c_addr % 16 == 0 && (n * out.bytes()) % 16 == 0;
    (c_box > 0 && out.bytes() == 2 && splits <= 1 && aligned).then_some(c_box)
}

/// The scale load for activation scales at `addr` with strides (row, K block) of an M x KB
/// grid. TMA needs a 16-byte aligned base, a pitch that is a multiple of 16 bytes and a unit
/// inner stride.
pub fn scale_load(addr: u64, m: usize, kb: usize, (row, col): (usize, usize)) -> ScaleLoad {
    let pitch_ok = |p: usize| (p * 4) % 16 == 0;
    if addr % 16 != 0 {
        ScaleLoad::CpAsync
    } else if col == 1 && row >= kb && pitch_ok(row) {
        ScaleLoad::TmaRows
    } else if row == 1 && col >= m && pitch_ok(col) {
        ScaleLoad::TmaCols
    } else {
        ScaleLoad::CpAsync
    }
}

/// Persistent CTAs (or clusters) for `work` items when at most `slots` run at once: the fewest
/// that still finish in the same number of waves (`ceil(work / waves)`), so that no slot idles
/// through the last wave while the others draw power. On the power-capped H200 the GPU clock
/// rises as fewer SMs run: 512 tiles take 4 waves on 128 CTAs as on 132.
pub fn persistent_ctas(work: u64, slots: u64) -> u64 {
    let slots = slots.max(1);
    if work <= slots {
        return work;
    }
    work.div_ceil(work.div_ceil(slots))
}

/// K splits for `cfg` on `shape`: the config's SPLIT_K if set (the tuner writes the split it
/// timed); else, when the tiles do not fill the SMs (one CTA per SM for TMA tiles, two for
/// mma.sync tiles; a cluster takes as many SMs as CTAs and works on that many tiles), at most
/// 8 splits of at least 4 K blocks each:
/// - swapped tiles (a few tokens, bound by streaming the weights): enough splits that every
///   SM streams, since an idle SM's share of the bandwidth is lost;
/// - other tiles: the count that minimizes the busiest CTA's work (whole waves of work items,
///   each its share of the K blocks plus `ITEM_COST` blocks for its start, epilogue and
///   atomics) plus, once split, `SPLIT_COST` blocks for the workspace and its conversion;
///   fewest splits on ties, so that a few items do not spill into a second wave.
///
/// H200, 2026-11-29: M=128 N=4096 K=7168 on 64x64 tiles (128 tiles) 15.7 us unsplit against
/// 18.1 with 2 splits; M=8 N=7168 K=18432 on swapped 16x64 tiles (112 tiles) 37.9 us with 2
/// splits against 43.3 unsplit.
pub fn split_k(cfg: &KernelConfig, shape: &GemmShape, sms: u32) -> u32 {
    SplitRule::new(cfg).splits(shape, sms)
}

/// What [`split_k`] reads of a config, looked up once (a launch asks for every M).
#[derive(Clone, Copy, Debug)]
pub struct SplitRule {
    pinned: Option<u32>,
    block_m: u32,
    block_n: u32,
    cluster: u32,
    /// The cluster's CTAs split each tile's K range (no workspace split besides).
    cluster_splits_k: bool,
    wgmma: bool,
    swapped: bool,
}

impl SplitRule {
    pub fn new(cfg: &KernelConfig) -> Self {
        let pinned = cfg.extra.get(SPLIT_K_KEY).and_then(|v| v.as_u64()).map(|v| v.min(u32::MAX as u64) as u32);
        let body = body(cfg);
        SplitRule { pinned, block_m: cfg.block_m, block_n: cfg.block_n, cluster: cfg.cluster().max(1), cluster_splits_k: cfg.cluster_splits_k(), wgmma: matches!(body, Some("tma" | "tma_swap")), swapped: body == Some("tma_swap") }
    }

    pub fn splits(&self, shape: &GemmShape, sms: u32) -> u32 {
        let kb = shape.k_blocks() as u32;
        if self.cluster_splits_k {
            return 1;
        }
        if let Some(v) = self.pinned {
            return v.clamp(1, kb.max(1));
        }
        let cluster = self.cluster;
        let tiles = tile_groups(self.block_m, self.block_n, cluster, shape);
        let slots = ((if self.wgmma { sms } else { 2 * sms }) / cluster).max(1) as usize;
        if tiles >= slots {
            return 1;
        }
        let most = 8.min(kb / 4).max(1);
        if self.swapped {
            return (slots.div_ceil(tiles) as u32).min(most);
        }
        // H200, 2026-11-29: with 1 block, M=128 N=7168 K=18432 on 128x128 tiles took 7 splits
        // (67.5 us); 5 keeps it at 2.
        const ITEM_COST: usize = 5;
        // H200, 2026-12-04 (64x64 at M = 100 and 256, N = 512-2048, K = 1024-4096, SPLIT_K 1-4
        // pinned): a split GEMM pays 2-5 us more than its blocks (e.g. 100x512x1024 3.2 us
        // unsplit, 4.5 in 2 splits; 256x1024x4096 10.0 against 13.8), 11-20 blocks' worth; with
        // 16 the rule picks the fastest split measured, or one within 1%, at all 18 shapes.
        const SPLIT_COST: usize = 16;
        let busiest = |s: u32| (tiles * s as usize).div_ceil(slots) * (kb.div_ceil(s) as usize + ITEM_COST) + if s > 1 { SPLIT_COST } else { 0 };
        (1..=most).min_by_key(|&s| busiest(s)).unwrap_or(1)
    }
}

/// Other K splits the tuner times for `cfg` on `shape` besides the rule's (none when the
/// config pins its split, splits K inside a cluster, or the rule does not split): unsplit, and
/// half the rule's count. The rule's split for swapped tiles keeps every SM streaming, which
/// short K does not always repay: H200, 2026-12-04, M = 16 N = 7168 K = 2048, 16x64 s8 unsplit
/// ran 6.25 us, the fastest tile in the rule's 2 splits (16x64 s4) 7.2-7.4.
pub fn split_alternatives(cfg: &KernelConfig, shape: &GemmShape, sms: u32) -> Vec<u32> {
    let rule = SplitRule::new(cfg);
    if rule.pinned.is_some() || rule.cluster_splits_k {
        return Vec::new();
    }
    let r = rule.splits(shape, sms);
    let mut out = Vec::new();
    if r > 1 {
        out.push(1);
        if r / 2 >= 2 {
            out.push(r / 2);
        }
    }
    out
}

/// Which compiled body serves `cfg` ("tma", "tma_swap" or "mma"), from the build's index.
pub fn body(cfg: &KernelConfig) -> Option<&'static str> {
    find_gemm(cfg, OutDtype::Bf16).ok().map(|g| g.body)
}

/// Whether `cfg` runs on the fp8 tensor cores through wgmma (QGMMA): the TMA bodies of sm_90a
/// builds. The mma.sync body is lowered to f16 HMMA on sm_90.
pub fn uses_wgmma(cfg: &KernelConfig) -> bool {
    matches!(body(cfg), Some("tma" | "tma_swap"))
}

/// The mma.sync tile that serves K % 16 != 0 (a row pitch TMA cannot describe); compiled in
/// every build.
pub fn unaligned_k_config() -> KernelConfig {
    tile_config(64, 128, 8, 2, 8)
}

/// The cubin for `module` built for compute capability `cc`: `sm_XYa` first, then `sm_XY`.
pub fn cubin(cc: (i32, i32), module: &str) -> Option<&'static [u8]> {
    let plain = format!("sm_{}{}", cc.0, cc.1);
    let arch_specific = format!("{plain}a");
    for arch in [&arch_specific, &plain] {
        if let Some(c) = CUBINS.iter().find(|c| c.arch == arch.as_str() && c.module == module) {
            return Some(c.bytes);
        }
    }
    None
}

/// Architectures this build has cubins for.
pub fn built_archs() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = CUBINS.iter().map(|c| c.arch).collect();
    v.dedup();
    v
}

/// Groups per block along K for the quantization kernel: the largest of 16/8/4 dividing the
/// group count (fewer idle threads), 4 otherwise.
pub fn quant_symbol(input: InputDtype, groups: usize) -> (&'static str, u32) {
    let gx = [16u32, 8, 4].into_iter().find(|g| groups % *g as usize == 0).unwrap_or(4);
    let name = match (input, gx) {
        (InputDtype::Bf16, 16) => "sm90_quant_per_token_group_bf16_gx16",
        (InputDtype::Bf16, 8) => "sm90_quant_per_token_group_bf16_gx8",
        (InputDtype::Bf16, _) => "sm90_quant_per_token_group_bf16_gx4",
        (InputDtype::F16, 16) => "sm90_quant_per_token_group_f16_gx16",
        (InputDtype::F16, 8) => "sm90_quant_per_token_group_f16_gx8",
        (InputDtype::F16, _) => "sm90_quant_per_token_group_f16_gx4",
        (InputDtype::F32, 16) => "sm90_quant_per_token_group_f32_gx16",
        (InputDtype::F32, 8) => "sm90_quant_per_token_group_f32_gx8",
        (InputDtype::F32, _) => "sm90_quant_per_token_group_f32_gx4",
    };
    (name, gx)
}

/// The weight quantization kernel for an input dtype.
pub fn weight_quant_symbol(input: InputDtype) -> &'static str {
    match input {
        InputDtype::F32 => "sm90_quant_weight_blocks_f32",
        InputDtype::Bf16 => "sm90_quant_weight_blocks_bf16",
        InputDtype::F16 => "sm90_quant_weight_blocks_f16",
    }
}

fn tile_config(bm: u32, bn: u32, warps: u32, stages: u32, group_m: u32) -> KernelConfig {
    KernelConfig {
        block_m: bm,
        block_n: bn,
        block_k: 128,
        group_m,
        num_warps: warps,
        num_stages: Some(stages),
        matrix_instr_nonkdim: None,
        kpack: None,
        waves_per_eu: None,
        extra: Default::default(),
    }
}

/// The first of `tiles` this build compiled (bf16 output exists for every compiled tile).
fn first_compiled(tiles: &[(u32, u32, u32, u32, u32)]) -> KernelConfig {
    let cfgs: Vec<KernelConfig> = tiles.iter().map(|&(bm, bn, w, s, g)| tile_config(bm, bn, w, s, g)).collect();
    cfgs.iter().find(|c| find_gemm(c, OutDtype::Bf16).is_ok()).unwrap_or(&cfgs[cfgs.len() - 1]).clone()
}

/// The kernel's default config (compiled in every build): 128x128 on the TMA body (two
/// consumer warpgroups, 6 stages) on sm_90a builds, else 64x128 on mma.sync.
pub fn default_config() -> KernelConfig {
    first_compiled(&[(128, 128, 8, 6, 8), (64, 128, 8, 4, 8)])
}

/// The `KernelDefault` path: a fixed tile per M range among the always-compiled tiles.
/// Up to M = 128 the shapes are bound by streaming B: swapped TMA tiles put the weights on the
/// wgmma M side and 16 or 32 tokens on its N side, with split-K filling the SMs (`split_k`);
/// the ranges follow the best tiles of the H200 sweep (BENCHMARKS.md), the ring depth up to
/// M = 32 the work items per SM (`deeper_ring_if_one_item_per_sm`), from M = 33 the tile count
/// (`deeper_ring_if_few_tiles`). Above M = 512 the
/// widest 128-row tile that keeps the SMs busy (`large_m_config`).
pub fn heuristic_config(shape: &GemmShape, sms: u32) -> KernelConfig {
    if shape.k % 16 != 0 {
        return unaligned_k_config();
    }
    match shape.m {
        0..=16 => deeper_ring_if_one_item_per_sm(shape, sms, &[(16, 64, 4, 4, 8), (16, 64, 4, 6, 1)]),
        17..=32 => deeper_ring_if_one_item_per_sm(shape, sms, &[(32, 64, 4, 4, 8), (32, 64, 4, 6, 1)]),
        33..=64 => deeper_ring_if_few_tiles(shape, sms, &[(32, 64, 4, 4, 8), (32, 64, 4, 6, 1)]),
        // Four 32-token tiles re-read each weight tile; 64x64 reads it twice (H200 sweep of
        // 2026-11-29: M=128 N=18432 K=7168 49.7 vs 70.5 us, N=4096 K=7168 20.5 vs 18.6 us).
        65..=128 => deeper_ring_if_few_tiles(shape, sms, &[(64, 64, 4, 4, 8), (32, 64, 4, 4, 8)]),
        129..=512 => first_compiled(&[(64, 64, 4, 4, 8), (64, 128, 8, 4, 8)]),
        _ => large_m_config(shape, sms),
    }
}

/// The first compiled of `tiles` (swapped 16x64 / 32x64 at M <= 32), in 8 stages instead of 4
/// when its work items (tiles times the rule's K splits) leave each SM one CTA, whose ring is
/// then all the bytes that SM has in flight. H200, 2026-12-04, `blockfp8 bench` kernel-default
/// rows, two rounds each (`git show 8a0a278:BENCHMARKS.md`): with the rule, at M = 1-32, N=2112 K=7168 (33 tiles in
/// 4 splits) 1.08-1.20x, N = 576 / 512 K=7168 (9 / 8 tiles in 8 splits) 1.01-1.07x, 1024x4096
/// 1.12-1.23x at M = 24 / 32 and level at M <= 16. Where items outnumber the SMs 8 stages were
/// mixed (N=4096 at K = 7168 / 14336, 192 items, 0.968-1.012x; N=8192 K=8192, 256 items, 1.07x at
/// M = 24 / 32 and 0.989x at M = 8), so those keep 4.
fn deeper_ring_if_one_item_per_sm(shape: &GemmShape, sms: u32, tiles: &[(u32, u32, u32, u32, u32)]) -> KernelConfig {
    let base = first_compiled(tiles);
    if !uses_wgmma(&base) {
        return base;
    }
    let items = tile_groups(base.block_m, base.block_n, 1, shape) * split_k(&base, shape, sms) as usize;
    if items > sms as usize {
        return base;
    }
    with_deeper_ring(base, &[8])
}

/// The first compiled of `tiles`, with a deeper ring when its tiles fit on the SMs at once: one
/// CTA per SM then streams with more bytes in flight, while with more tiles than SMs the
/// shallower ring lets more CTAs share an SM. 8 stages instead of 4 (H200, 2026-11-30, `blockfp8
/// bench`, 2 rounds): N=4096 at K = 4096, 7168 and 14336 ran 20-21% faster at M=128 (64x64) and
/// 6-12% at M=64 (32x64); N >= 7168 at M=128 ran 13-27% slower with 8 stages. 11 for the 64x64
/// tile (its scale slabs and C buffer still fit beside them) where the tiles fill more than three
/// quarters of the SMs (H200, 2026-12-03, three rounds: 128 tiles at 128x4096x7168 1.064x over 8,
/// at 96x4096x7168 1.013x; 64-66 tiles at 96x2048x7168 0.948x and 128x2112x7168 0.982x). At
/// M <= 32 (one row of tiles) 8 stages gained nothing.
fn deeper_ring_if_few_tiles(shape: &GemmShape, sms: u32, tiles: &[(u32, u32, u32, u32, u32)]) -> KernelConfig {
    let base = first_compiled(tiles);
    // (Measured on the TMA tiles only; builds without sm_90a keep their mma.sync tile as is.)
    let count = tile_groups(base.block_m, base.block_n, 1, shape);
    if !uses_wgmma(&base) || count > sms as usize {
        return base;
    }
    let depths: &[u32] = if (base.block_m, base.block_n) == (64, 64) && 4 * count > 3 * sms as usize { &[11, 8] } else { &[8] };
    with_deeper_ring(base, depths)
}

/// `base`'s tile in the first of `depths` stages this build compiles, else `base` itself.
fn with_deeper_ring(base: KernelConfig, depths: &[u32]) -> KernelConfig {
    depths
        .iter()
        .map(|&s| tile_config(base.block_m, base.block_n, base.num_warps, s, base.group_m))
        .find(|deep| find_gemm(deep, OutDtype::Bf16).is_ok())
        .unwrap_or(base)
}

/// Large M: 128x128, 128x192 or 128x256 (those compiled), whichever finishes first in whole
/// waves of tiles over the SMs, a wide tile's time being its columns over its speed relative
/// to 128x128. H200 sweep of 2026-11-30: 128x256 at 1.12x the 128x128 speed (M=N=4096
/// K=7168: 193 against 217 us, 4 waves against 8), 128x192 at 1.10x (M=1024 N=18432:
/// 220 us in 6 waves, against 235 for 128x256 in 5 of 576 tiles). 128x192 runs 4 stages:
/// with its C by TMA store they won 29 of the 72 entries re-tuned at M >= 512 (BENCHMARKS.md).
fn large_m_config(shape: &GemmShape, sms: u32) -> KernelConfig {
    const WIDE: [(u32, u32, f64); 3] = [(256, 4, 1.12), (192, 4, 1.10), (128, 6, 1.0)];
    let sms = sms.max(1) as usize;
    let time = |bn: u32, speed: f64| (tile_groups(128, bn, 1, shape).div_ceil(sms) as f64) * bn as f64 / speed;
    WIDE.iter()
        .map(|&(bn, stages, speed)| (tile_config(128, bn, 8, stages, 8), time(bn, speed)))
        .filter(|(c, _)| find_gemm(c, OutDtype::Bf16).is_ok())
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
        .unwrap_or_else(default_config)
}

/// The compiled instantiation for `cfg` and `out`, or why there is none.
pub fn find_gemm(cfg: &KernelConfig, out: OutDtype) -> Result<&'static GemmInstance, String> {
    if cfg.block_k != 128 {
        return Err(format!("BLOCK_SIZE_K={} (the CUDA kernel needs 128, the scale block)", cfg.block_k));
    }
    let stages = cfg.num_stages.unwrap_or(2);
    GEMM_INSTANCES
        .iter()
        .find(|g| {
            g.block_m == cfg.block_m && g.block_n == cfg.block_n && g.num_warps == cfg.num_warps && g.num_stages == stages && g.cluster == cfg.cluster() && g.cluster_splits_k == cfg.cluster_splits_k() && g.out == out.name()
        })
        .ok_or_else(|| {
            format!(
                "config {} with {} output is not compiled in this build (build with feature `tuning-full` for the candidate set; see the resource report for shipped configs the kernel cannot run)",
                cfg.short(),
                out.name()
            )
        })
}

/// Every compiled tile (bf16 output exists for all of them), as configs for the tuner.
pub fn candidate_configs() -> Vec<KernelConfig> {
    let mut v: Vec<KernelConfig> = GEMM_INSTANCES
        .iter()
        .filter(|g| g.out == "bf16")
        .map(|g| {
            let mut c = tile_config(g.block_m, g.block_n, g.num_warps, g.num_stages, 8);
            if g.cluster > 1 {
                c.extra.insert(CLUSTER_KEY.into(), g.cluster.into());
            }
            if g.cluster_splits_k {
                c.extra.insert(CLUSTER_SPLITS_K_KEY.into(), true.into());
            }
            c
        })
        .collect();
    v.dedup();
    v
}
