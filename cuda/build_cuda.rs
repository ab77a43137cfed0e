//! Build step for feature `cuda`: compiles `cuda/*.cu` to cubins with nvcc and embeds them.
//!
//! - nvcc: `$BLOCKFP8_NVCC`, then `$CUDA_HOME/bin/nvcc`, `$CUDA_PATH/bin/nvcc`, then `nvcc` on
//!   PATH, then the PyPI wheel (`site-packages/nvidia/cu13/bin/nvcc`). Release 12.8 or newer.
//! - `$BLOCKFP8_NVCC_FLAGS`: extra nvcc arguments, whitespace separated (e.g. `-lineinfo`).
//! - Architectures: `$BLOCKFP8_CUDA_ARCHS`, comma separated (default `sm_90a`). The GEMM needs
//!   `mma ... e4m3` (sm_89 or newer).
//! - GEMM configs are template parameters. Compiled: the default set, the configs named by the
//!   shipped `configs/*H100*|*H200*.json` files (where the kernel can run them), and with
//!   feature `tuning-full` the whole candidate set (bf16 output only for the extras).
//! - `OUT_DIR/cuda_resource_report.txt` keeps ptxas' `-v` report; a spill in a GEMM kernel
//!   (or a ptxas "wgmma serialized" notice) fails the build. `OUT_DIR/cuda_kernels.rs` is the typed index the runtime loads from.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "launch_abi.rs"]
mod launch_abi;

const DEFAULT_ARCHS: &str = "sm_90a";
const MIN_VERSION: (u32, u32) = (12, 8);
const INSTALL_HINT: &str = "install the CUDA toolkit (12.8+), or on a machine without CUDA: \
     `pip install nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 \"nvidia-cuda-crt==13.0.*\" \
     \"nvidia-nvvm==13.0.*\" nvidia-cuda-cccl` (then nvcc is found in site-packages/nvidia/cu13/bin), \
     or point BLOCKFP8_NVCC at an nvcc binary";
/// Translation units compiled in parallel for the GEMM instantiations.
const GEMM_PARTS: usize = 2;
const MAX_SMEM: u32 = 227 * 1024;

/// One GEMM instantiation (tile config x output dtype). Must match `gemm_block_fp8.cuh` and
/// `gemm_sm90_tma.cuh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Tile {
    bm: u32,
    bn: u32,
    warps: u32,
    stages: u32,
    /// CTAs per cluster: 2 pairs vertically adjacent TMA tiles that multicast one weight tile,
    /// or with `splits_k` splits each tile's K range.
    cluster: u32,
    /// The cluster's CTAs split each tile's K range and add their sums on chip (TmaTile::KS).
    splits_k: bool,
}

/// Which kernel body a tile compiles to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    /// TMA + warp-specialized wgmma (sm_90a only); `swap` = weights on the wgmma M side.
    Tma { swap: bool },
    /// The portable mma.sync body.
    Mma,
}

impl Tile {
    fn tag(&self) -> String {
        let c = match (self.cluster, self.splits_k) {
            (1, _) => String::new(),
            (c, false) => format!("c{c}"),
            (c, true) => format!("c{c}k"),
        };
        format!("m{}n{}w{}s{}{c}", self.bm, self.bn, self.warps, self.stages)
    }
    /// The TMA body: one consumer warpgroup (4 warps) per 64 rows of the wgmma M side, BN 64 or
    /// 128 (or 192 / 256 at BM 128), 3+ stages. Normal when warps = 4 * BM / 64 (BM 64/128);
    /// swapped (weights on the M side, tokens on the N side) when warps = 4 * BN / 64 and BM
    /// is 16/32/64. Mirrored by kernels.rs at run time (from the generated index) and by
    /// TmaTile in gemm_sm90_tma.cuh.
    fn body(&self, wgmma_build: bool) -> Body {
        // 64x32 (one consumer, BN 32): DeepGEMM's tile for M <= 64 at N = 4096, one wave of
        // 128 tiles with no K split (H200: M=64 N=4096 K=4096 9.0 us against 10.8 for the
        // kernel default; K=7168 13.8 against 14.2).
        let narrow = self.bn == 32 && self.bm == 64 && self.warps == 4;
        let tma_common = wgmma_build && self.stages >= 3 && (self.bn == 64 || self.bn == 128 || narrow);
        // 128x144 / 128x192: two consumers of 64x144 / 64x192 (192 the widest accumulators
        // that fit the registers; 144 is DeepGEMM's tile for N = 18432, one wave of 128 tiles);
        // 128x256: two consumers of 64x256 in two waves of 128 columns.
        let wide = wgmma_build && self.stages >= 3 && self.bm == 128 && matches!(self.bn, 144 | 192 | 256) && self.warps == 8;
        if wide || (tma_common && (self.bm == 64 || self.bm == 128) && self.warps == 4 * (self.bm / 64)) {
            Body::Tma { swap: false }
        } else if tma_common && matches!(self.bm, 16 | 32 | 64) && self.warps == 4 * (self.bn / 64) {
            Body::Tma { swap: true }
        } else {
            Body::Mma
        }
    }
    /// Dynamic shared memory, plus 1024 bytes to align swizzle atoms. TMA: mirror of TmaTile.
    fn smem(&self, body: Body) -> u32 {
        match body {
            Body::Mma => self.stages * ((self.bm + self.bn) * 128 + self.bm * 4) + 1024,
            Body::Tma { .. } => {
                let end = if self.c_box(body) > 0 { self.smem_with_c_buffer(body) } else { self.smem_before_c(body) };
                end + 1024
            }
        }
    }
    /// TMA: shared memory below the C buffer (TmaTile::X_END): the ring, the slabs, and on
    /// K-split pairs two barriers and the peer's BM x BN fp32 sums.
    fn smem_before_c(&self, body: Body) -> u32 {
        let end = self.ring_end(body);
        let end = if self.scale_slab(body) { self.slabs_end(end) } else { end };
        if self.splits_k { end.div_ceil(16) * 16 + 16 + self.bm * self.bn * 4 } else { end }
    }
    /// TMA: the end of the ring, its scales, barriers, the producer's load count and (swapped
    /// tiles) C staging (TmaTile::C_END).
    fn ring_end(&self, body: Body) -> u32 {
        // A stage's activation scales: BM rows of 4 floats on the tiles that load them by TMA
        // per stage, else BM floats.
        let as_row = if self.scale_tma(body) { 4 } else { 1 };
        let scales_b = self.stages * (self.bm + self.bn) * 128 + self.stages * self.bm * 4 * as_row;
        let weight_scale_blocks = if self.bn > 128 { 2 } else { 1 };
        let bars = (scales_b + self.stages * 4 * weight_scale_blocks).div_ceil(8) * 8;
        let c_stage = if matches!(body, Body::Tma { swap: true }) { self.warps * self.bm * 24 * 2 } else { 0 };
        // The producer's count of loaded ring positions and the CTA's last tile origin
        // (TmaTile::LOADS_BYTES): unclustered two-consumer normal tiles.
        let loads = if self.scale_tma(body) && self.cluster == 1 { 16 } else { 0 };
        (bars + 16 * self.stages + loads).div_ceil(16) * 16 + c_stage
    }
    /// TMA: the end of the one-consumer deep-ring tiles' two per-tile scale slabs after `end`
    /// (TmaTile::SLABS_END), 128-byte aligned: 64 K blocks of BM activation scales, 68 weight
    /// scales.
    fn slabs_end(&self, end: u32) -> u32 {
        end.div_ceil(128) * 128 + 2 * (64 * self.bm * 4) + 2 * 68 * 4
    }
    /// TMA: the end of a C buffer after smem_before_c, 1024-aligned (TmaTile::OFF_CBUF + BM x BN
    /// 16-bit outputs), for the tiles that store C by TMA (TmaTile::C_TMA).
    fn smem_with_c_buffer(&self, body: Body) -> u32 {
        self.c_buffer_end(self.smem_before_c(body))
    }
    /// The end of a C buffer placed after `end`.
    fn c_buffer_end(&self, end: u32) -> u32 {
        end.div_ceil(1024) * 1024 + self.bm * self.bn * 2
    }
    /// Whether a C buffer placed after `end` still fits the shared memory, with the launch's
    /// 1024 bytes of alignment slack (TmaTile::c_buffer_fits).
    fn c_buffer_fits(&self, end: u32) -> bool {
        self.c_buffer_end(end) + 1024 <= MAX_SMEM
    }
    /// Whether a stage's activation scales may come by TMA (TmaTile::AS_TMA): the two-consumer
    /// normal tiles.
    fn scale_tma(&self, body: Body) -> bool {
        self.warps == 8 && body == (Body::Tma { swap: false })
    }
    /// Whether a tile's scales may come once per tile, into slabs (TmaTile::AS_SLAB): the
    /// one-consumer normal tiles of 8+ stages, unclustered or in K-split pairs (each CTA loads
    /// its own), whose ring leaves room for the slabs and a C buffer.
    fn scale_slab(&self, body: Body) -> bool {
        if !(self.warps == 4 && body == (Body::Tma { swap: false }) && self.stages >= 8 && (self.cluster == 1 || self.splits_k)) {
            return false;
        }
        self.c_buffer_fits(self.slabs_end(self.ring_end(body)))
    }
    /// Columns per TMA store box of C (TmaTile::C_BOX) on the tiles that store C by TMA from a
    /// buffer of their own (TmaTile::C_TMA: normal tiles where the buffer fits the shared
    /// memory), else 0.
    fn c_box(&self, body: Body) -> u32 {
        if body != (Body::Tma { swap: false }) {
            return 0;
        }
        let fits = self.c_buffer_fits(self.smem_before_c(body));
        match (fits, self.bn % 64, self.bn % 32) {
            (false, _, _) => 0,
            (true, 0, _) => 64,
            (true, _, 0) => 32,
            _ => 16,
        }
    }
    /// Whether the tile's 16-bit C goes out through the store warp, the CTA's last C through a
    /// second C map (TmaTile::STORE_WARP): two-consumer C-buffer tiles but 128x144, unclustered.
    fn store_warp(&self, body: Body) -> bool {
        self.c_box(body) > 0 && self.warps == 8 && self.bn != 144 && self.cluster == 1
    }
    /// TMA: mirror of TmaTile::THREADS (two producer warps, or a warpgroup with two consumers).
    fn threads(&self, body: Body) -> u32 {
        self.warps * 32
            + match body {
                Body::Tma { .. } if self.warps == 8 => 128,
                Body::Tma { .. } => 64,
                Body::Mma => 0,
            }
    }
}

/// Mirror of `gemm_warps_m` in gemm_block_fp8.cuh (0 = no layout fits).
fn warps_m(bm: u32, bn: u32, warps: u32) -> u32 {
    let (mut best, mut best_score) = (0, u32::MAX);
    let mut wm = 1;
    while wm <= warps {
        let wn = warps / wm;
        if bm % (wm * 16) == 0 && bn % (wn * 16) == 0 {
            let score = (bm / wm).abs_diff(bn / wn);
            if score < best_score {
                best_score = score;
                best = wm;
            }
        }
        wm *= 2;
    }
    best
}

/// Why the kernel cannot run a tile, if it cannot. Mirrored at run time by kernels.rs
/// (which only sees what was compiled).
fn tile_problem(t: &Tile, wgmma_build: bool) -> Option<String> {
    let body = t.body(wgmma_build);
    if t.bm == 0 || t.bm % 16 != 0 || t.bm > 256 {
        return Some(format!("BLOCK_SIZE_M={} (needs a multiple of 16 up to 256)", t.bm));
    }
    let wide = matches!(t.bn, 144 | 192 | 256) && body == (Body::Tma { swap: false });
    if !wide && (t.bn < 16 || 128 % t.bn != 0) {
        return Some(format!(
            "BLOCK_SIZE_N={} (needs 16, 32, 64 or 128, or 144 / 192 / 256 with BLOCK_SIZE_M=128, num_warps=8, num_stages>=3 on sm_90a)",
            t.bn
        ));
    }
    if t.cluster != 1 && !(t.cluster == 2 && body == (Body::Tma { swap: false }) && t.bn % 16 == 0) {
        return Some(format!("cluster of {} (only 2, on the unswapped TMA tiles of sm_90a)", t.cluster));
    }
    if t.splits_k && !(t.cluster == 2 && t.warps == 4 && body == (Body::Tma { swap: false })) {
        return Some("a K-split cluster (only pairs of one-consumer unswapped TMA tiles, BLOCK_SIZE_M=64 num_warps=4)".into());
    }
    if t.warps != 4 && t.warps != 8 {
        return Some(format!("num_warps={} (needs 4 or 8)", t.warps));
    }
    // The TMA ring takes up to 15 stages where they fit the shared memory (64x32 s15 with its
    // scale slabs and C buffer is the deepest).
    let most_stages = if matches!(body, Body::Tma { .. }) { 15 } else { 8 };
    if !(2..=most_stages).contains(&t.stages) {
        return Some(format!("num_stages={} (needs 2..{most_stages})", t.stages));
    }
    if body == Body::Mma {
        let wm = warps_m(t.bm, t.bn, t.warps);
        if wm == 0 {
            return Some(format!("no warp layout for a {}x{} tile with {} warps", t.bm, t.bn, t.warps));
        }
        // Accumulator + promoted total live in registers: above 32x32 per warp the mma.sync
        // body spills.
        let (wtm, wtn) = (t.bm / wm, t.bn / (t.warps / wm));
        if wtm * wtn > 1024 {
            return Some(format!("warp tile {wtm}x{wtn} too large (spills; at most 1024 elements)"));
        }
    }
    if t.smem(body) > MAX_SMEM {
        return Some(format!("{} bytes of shared memory (max {MAX_SMEM})", t.smem(body)));
    }
    None
}

fn tiles(list: &[(u32, u32, u32, u32)]) -> Vec<Tile> {
    list.iter().map(|&(bm, bn, warps, stages)| Tile { bm, bn, warps, stages, cluster: 1, splits_k: false }).collect()
}

/// Compiled for every build: the kernel default, the per-M heuristic tiles, and the mma.sync
/// tile that serves K % 16 != 0 (and every shape on builds without sm_90a). Also 128x128 s5,
/// which no rule or file picks: the shortest ring of the tiles whose producer warp stores C,
/// it hung every time under back-to-back launches until the store warp's pacing was fixed
/// (H200), so the GPU test `two_consumer_tiles_finish_under_back_to_back_launches` runs it.
fn default_tiles(wgmma_build: bool) -> Vec<Tile> {
    if wgmma_build {
        tiles(&[(128, 128, 8, 5), (128, 128, 8, 6), (128, 192, 8, 4), (128, 256, 8, 3), (128, 256, 8, 4), (64, 64, 4, 4), (64, 64, 4, 8), (64, 64, 4, 11), (16, 64, 4, 4), (16, 64, 4, 8), (32, 64, 4, 4), (32, 64, 4, 8), (64, 32, 4, 12), (64, 128, 8, 2)])
    } else {
        tiles(&[(64, 128, 8, 4), (16, 64, 4, 6), (32, 64, 4, 6), (64, 64, 4, 4), (128, 64, 8, 4), (64, 128, 8, 2)])
    }
}

/// The tuning set (feature `tuning-full`): on sm_90a builds every TMA tile that fits; elsewhere
/// the mma.sync tiles.
fn candidate_tiles(wgmma_build: bool) -> Vec<Tile> {
    let mut out = Vec::new();
    for bm in [16, 32, 64, 128] {
        for bn in [32, 64, 128, 144, 192, 256] {
            for warps in [4, 8] {
                for stages in [3, 4, 5, 6, 8, 10, 11, 12, 13, 14, 15] {
                    let t = Tile { bm, bn, warps, stages, cluster: 1, splits_k: false };
                    let tma = matches!(t.body(true), Body::Tma { .. });
                    // 144, 192 and 256 exist only on the TMA body.
                    let wanted = if wgmma_build { tma } else { bn <= 128 };
                    if wanted && tile_problem(&t, wgmma_build).is_none() {
                        out.push(t);
                        // Large-M tiles also in clusters of two (weight tile multicast), the
                        // one-consumer 64-row tiles in pairs that split K.
                        let pair = Tile { cluster: 2, ..t };
                        if bm == 128 && tile_problem(&pair, wgmma_build).is_none() {
                            out.push(pair);
                        }
                        let k_pair = Tile { cluster: 2, splits_k: true, ..t };
                        if bm == 64 && warps == 4 && tile_problem(&k_pair, wgmma_build).is_none() {
                            out.push(k_pair);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Tiles named by shipped NVIDIA Hopper config files; the report lists those skipped.
fn shipped_tiles(report: &mut String, wgmma_build: bool) -> Vec<Tile> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("configs") else { return out };
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for f in files {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !name.ends_with(".json") || !(name.contains("H100") || name.contains("H200")) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(&text) else {
            let _ = writeln!(report, "config {name}: not a JSON object, skipped");
            continue;
        };
        for (m, entry) in map {
            // Entries that chose the vendor path keep the runner-up kernel fields for vLLM-style
            // loaders; this crate never launches them, so they are not compiled.
            if entry.get("blockfp8_path").and_then(|v| v.as_str()) == Some("vendor") {
                continue;
            }
            let get = |k: &str| entry.get(k).and_then(|v| v.as_u64()).map(|v| v as u32);
            let (Some(bm), Some(bn), Some(bk), Some(warps)) =
                (get("BLOCK_SIZE_M"), get("BLOCK_SIZE_N"), get("BLOCK_SIZE_K"), get("num_warps"))
            else {
                continue;
            };
            let cluster = entry.get("blockfp8_cluster").and_then(|v| v.as_u64()).unwrap_or(1).min(u32::MAX as u64) as u32;
            let splits_k = entry.get("blockfp8_cluster_splits_k").and_then(|v| v.as_bool()) == Some(true);
            let t = Tile { bm, bn, warps, stages: get("num_stages").unwrap_or(2), cluster, splits_k };
            let problem = if bk != 128 { Some(format!("BLOCK_SIZE_K={bk} (needs 128)")) } else { tile_problem(&t, wgmma_build) };
            match problem {
                None => out.push(t),
                Some(why) => {
                    let _ = writeln!(report, "config {name} M={m}: {why}; not compiled");
                }
            }
        }
    }
    out
}

fn find_nvcc() -> PathBuf {
    if let Ok(p) = std::env::var("BLOCKFP8_NVCC") {
        return PathBuf::from(p);
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Ok(root) = std::env::var(var) {
            let p = Path::new(&root).join("bin").join("nvcc");
            if p.exists() {
                return p;
            }
        }
    }
    if Command::new("nvcc").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return PathBuf::from("nvcc");
    }
    let py = "import nvidia, os; print(list(nvidia.__path__)[0])";
    if let Ok(o) = Command::new("python3").args(["-c", py]).output() {
        let root = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        for sub in ["cu13", "cuda_nvcc", "cu12"] {
            let p = root.join(sub).join("bin").join("nvcc");
            if p.exists() {
                return p;
            }
        }
    }
    panic!("blockfp8 (feature `cuda`): no nvcc found (BLOCKFP8_NVCC, CUDA_HOME, CUDA_PATH, PATH, PyPI wheel); {INSTALL_HINT}");
}

fn check_version(nvcc: &Path) {
    let out = Command::new(nvcc)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("blockfp8: cannot run {}: {e}; {INSTALL_HINT}", nvcc.display()));
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.split("release ").nth(1).and_then(|r| {
        let v = r.split(',').next()?;
        let mut it = v.trim().split('.');
        Some((it.next()?.parse::<u32>().ok()?, it.next()?.parse::<u32>().ok()?))
    });
    match version {
        Some(v) if v >= MIN_VERSION => {}
        Some(v) => panic!(
            "blockfp8: {} is CUDA {}.{}, need {}.{}+ (fp8 mma and sm_90a); {INSTALL_HINT}",
            nvcc.display(),
            v.0,
            v.1,
            MIN_VERSION.0,
            MIN_VERSION.1
        ),
        None => panic!("blockfp8: cannot read the version of {} from {text:?}; {INSTALL_HINT}", nvcc.display()),
    }
}

struct Job {
    module: String,
    arch: String,
    src: PathBuf,
    defines: Vec<String>,
}

fn compile(nvcc: &Path, out_dir: &Path, job: &Job) -> (PathBuf, String) {
    let cubin = out_dir.join(format!("{}_{}.cubin", job.module, job.arch));
    let compute = job.arch.replacen("sm_", "compute_", 1);
    let mut cmd = Command::new(nvcc);
    cmd.arg("-cubin")
        .arg("-O3")
        .arg("-std=c++17")
        .arg(format!("-gencode=arch={compute},code={}", job.arch))
        .arg("-Xptxas")
        .arg("-v")
        .arg("-I")
        .arg("cuda")
        .arg("-I")
        .arg(out_dir);
    for d in &job.defines {
        cmd.arg(format!("-D{d}"));
    }
    // Extra nvcc arguments (e.g. -lineinfo for profiling), whitespace separated.
    if let Ok(extra) = std::env::var("BLOCKFP8_NVCC_FLAGS") {
        cmd.args(extra.split_whitespace());
    }
    cmd.arg(&job.src).arg("-o").arg(&cubin);
    let out = cmd.output().unwrap_or_else(|e| panic!("blockfp8: cannot run {}: {e}", nvcc.display()));
    let log = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        panic!("blockfp8: nvcc failed on {} ({}):\n{log}", job.src.display(), job.arch);
    }
    (cubin, log)
}

/// GEMM entries whose ptxas report shows spills or a stack frame (local-memory arrays).
fn spilled_gemm_kernels(log: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut current = String::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().unwrap_or("").to_string();
        } else if line.contains("spill stores") && current.contains("gemm") {
            // A stack frame means a register array went to local memory: as bad as a spill.
            let zero = line.trim_start().starts_with("0 bytes stack frame")
                && line.contains(" 0 bytes spill stores")
                && line.contains(" 0 bytes spill loads");
            if !zero {
                bad.push(format!("{current}: {}", line.trim()));
            }
        }
    }
    bad
}

pub fn build(out_dir: &Path) {
    for var in ["BLOCKFP8_NVCC", "CUDA_HOME", "CUDA_PATH", "BLOCKFP8_CUDA_ARCHS", "BLOCKFP8_NVCC_FLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=cuda");
    let nvcc = find_nvcc();
    check_version(&nvcc);
    let archs: Vec<String> = std::env::var("BLOCKFP8_CUDA_ARCHS")
        .unwrap_or_else(|_| DEFAULT_ARCHS.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();

    let mut report = format!("nvcc: {}\narchs: {}\n", nvcc.display(), archs.join(","));
    // TMA/wgmma tiles only when every target is sm_90a (elsewhere every tile is mma.sync).
    let wgmma_build = archs.iter().all(|a| a == "sm_90a");
    let mut all: BTreeSet<Tile> = default_tiles(wgmma_build).into_iter().collect();
    all.extend(shipped_tiles(&mut report, wgmma_build));
    let full: BTreeSet<Tile> =
        if cfg!(feature = "tuning-full") { candidate_tiles(wgmma_build).into_iter().collect() } else { BTreeSet::new() };
    // (tile, out dtypes): default/shipped tiles get every output dtype, extra tuning tiles bf16.
    let mut instances: Vec<(Tile, Vec<&str>)> = all.iter().map(|t| (*t, vec!["bf16", "f16", "f32"])).collect();
    instances.extend(full.difference(&all).map(|t| (*t, vec!["bf16"])));

    // The launcher's `as_load` encoding and C box rows (cuda/launch_abi.rs) checked against the header's.
    let abi_check = format!(
        "static_assert(bfp8::AS_CP_ASYNC == {} && bfp8::AS_TMA_ROWS == {} && bfp8::AS_TMA_COLS == {} && bfp8::AS_BS_BULK == {} && bfp8::AS_SLAB_SHIFT == {}, \"cuda/launch_abi.rs mirrors bfp8::AsLoad\");\n",
        launch_abi::AS_CP_ASYNC,
        launch_abi::AS_TMA_ROWS,
        launch_abi::AS_TMA_COLS,
        launch_abi::AS_BS_BULK,
        launch_abi::AS_SLAB_SHIFT
    ) + &format!(
        "static_assert(bfp8::C_BOX_ROWS == {} && bfp8::C_LAST_BOX_ROWS == {}, \"cuda/launch_abi.rs mirrors bfp8::C_BOX_ROWS / C_LAST_BOX_ROWS\");\n",
        launch_abi::C_BOX_ROWS,
        launch_abi::C_LAST_BOX_ROWS
    );
    let mut parts = vec![abi_check; GEMM_PARTS];
    let mut table = String::new();
    for (i, (t, outs)) in instances.iter().enumerate() {
        let part = i % GEMM_PARTS;
        let body = t.body(wgmma_build);
        if body != Body::Mma {
            // The launch's dynamic shared memory is this mirror of TmaTile::SMEM: a mismatch
            // stops the build rather than corrupting shared memory (once per tile: the size
            // does not depend on the output type).
            let tt = format!("bfp8::TmaTile<{}, {}, {}, {}, {}, {}>", t.bm, t.bn, t.warps, t.stages, t.cluster, t.splits_k);
            let _ = writeln!(parts[part], "static_assert({tt}::SMEM + 1024 == {}, \"cuda/build_cuda.rs Tile::smem mirrors TmaTile::SMEM\");", t.smem(body));
            let _ = writeln!(
                parts[part],
                "static_assert(({tt}::C_TMA ? {tt}::C_BOX : 0) == {}, \"cuda/build_cuda.rs Tile::c_box mirrors TmaTile::C_TMA / C_BOX\");",
                t.c_box(body)
            );
            let _ = writeln!(
                parts[part],
                "static_assert({tt}::AS_TMA == {} && {tt}::AS_SLAB == {}, \"cuda/build_cuda.rs Tile::scale_tma / scale_slab mirror TmaTile::AS_TMA / AS_SLAB\");",
                t.scale_tma(body),
                t.scale_slab(body)
            );
            let _ = writeln!(
                parts[part],
                "static_assert({tt}::SLAB_KB == {}, \"cuda/launch_abi.rs SCALE_SLAB_K_BLOCKS mirrors TmaTile::SLAB_KB\");",
                launch_abi::SCALE_SLAB_K_BLOCKS
            );
            let _ = writeln!(parts[part], "static_assert({tt}::STORE_WARP == {}, \"cuda/build_cuda.rs Tile::store_warp mirrors TmaTile::STORE_WARP\");", t.store_warp(body));
        }
        for out in outs {
            let ty = match *out {
                "bf16" => "__nv_bfloat16",
                "f16" => "__half",
                _ => "float",
            };
            let line = match (body, t.cluster, t.splits_k) {
                (Body::Mma, _, _) => format!("BLOCKFP8_GEMM_INSTANCE_T({}, {}, {}, {}, {out}, {ty})", t.bm, t.bn, t.warps, t.stages),
                (_, 1, _) => format!("BLOCKFP8_GEMM_TMA_INSTANCE_T({}, {}, {}, {}, {out}, {ty})", t.bm, t.bn, t.warps, t.stages),
                (_, c, false) => format!("BLOCKFP8_GEMM_TMA_CLUSTER_INSTANCE_T({}, {}, {}, {}, {c}, {out}, {ty})", t.bm, t.bn, t.warps, t.stages),
                (_, c, true) => format!("BLOCKFP8_GEMM_TMA_KSPLIT_INSTANCE_T({}, {}, {}, {}, {c}, {out}, {ty})", t.bm, t.bn, t.warps, t.stages),
            };
            let _ = writeln!(parts[part], "{line}");
            let body_name = match body {
                Body::Mma => "mma",
                Body::Tma { swap: false } => "tma",
                Body::Tma { swap: true } => "tma_swap",
            };
            let _ = writeln!(
                table,
                "    GemmInstance {{ block_m: {}, block_n: {}, num_warps: {}, num_stages: {}, cluster: {}, cluster_splits_k: {}, out: {out:?}, module: \"gemm_block_fp8_{part}\", symbol: \"sm90_gemm_block_fp8_{}_{out}\", smem_bytes: {}, threads: {}, body: {body_name:?}, c_box: {}, store_warp: {}, scale_tma: {}, scale_slab: {} }},",
                t.bm, t.bn, t.warps, t.stages, t.cluster, t.splits_k, t.tag(), t.smem(body), t.threads(body), t.c_box(body), t.store_warp(body), t.scale_tma(body), t.scale_slab(body)
            );
        }
    }
    for (p, text) in parts.iter().enumerate() {
        std::fs::write(out_dir.join(format!("gemm_instances_{p}.inc")), text).expect("write gemm instances");
    }

    let mut jobs = Vec::new();
    for arch in &archs {
        for stem in ["quant_per_token_group", "quant_weight_blocks", "splitk_convert", "scale_layout", "traffic_floor"] {
            jobs.push(Job { module: stem.into(), arch: arch.clone(), src: format!("cuda/{stem}.cu").into(), defines: vec![] });
        }
        for p in 0..GEMM_PARTS {
            jobs.push(Job {
                module: format!("gemm_block_fp8_{p}"),
                arch: arch.clone(),
                src: "cuda/gemm_block_fp8.cu".into(),
                defines: vec![format!("BLOCKFP8_GEMM_PART={p}")],
            });
        }
    }
    let results: Vec<(PathBuf, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs.iter().map(|j| s.spawn(|| compile(&nvcc, out_dir, j))).collect();
        handles.into_iter().map(|h| h.join().expect("nvcc thread")).collect()
    });

    let mut spills = Vec::new();
    let mut cubins = String::new();
    for (job, (cubin, log)) in jobs.iter().zip(&results) {
        let _ = writeln!(report, "\n== {} ({})\n{log}", job.module, job.arch);
        spills.extend(spilled_gemm_kernels(log));
        // ptxas C7518/C7515...: wgmmas serialized (each waits for the last): a silent 2x loss.
        spills.extend(log.lines().filter(|l| l.contains("Potential Performance Loss: wgmma")).map(|l| l.trim().to_string()));
        let _ = writeln!(
            cubins,
            "    CubinImage {{ arch: {:?}, module: {:?}, bytes: include_bytes!({:?}) }},",
            job.arch,
            job.module,
            cubin.display().to_string()
        );
    }
    std::fs::write(out_dir.join("cuda_resource_report.txt"), &report).expect("write resource report");
    if !spills.is_empty() {
        panic!(
            "blockfp8: GEMM kernels spill registers or serialize wgmma (see {}):\n{}",
            out_dir.join("cuda_resource_report.txt").display(),
            spills.join("\n")
        );
    }

    let src = format!(
        "// Generated by cuda/build_cuda.rs.\n\
         /// One embedded cubin: `module` is the .cu stem (GEMM parts carry a suffix).\n\
         pub struct CubinImage {{ pub arch: &'static str, pub module: &'static str, pub bytes: &'static [u8] }}\n\
         /// One compiled GEMM instantiation: a tile config and an output dtype. TMA tiles: `c_box`\n\
         /// the columns of a C store box when the tile stores 16-bit C by TMA (else 0), `store_warp`\n\
         /// whether that C goes out through the store warp (the last C through a second C map),\n\
         /// `scale_tma` whether a stage's activation scales may come by TMA, `scale_slab` whether\n\
         /// a tile's scales may come once per tile (all checked against TmaTile at compile time).\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq)]\n\
         pub struct GemmInstance {{ pub block_m: u32, pub block_n: u32, pub num_warps: u32, pub num_stages: u32, pub cluster: u32, pub cluster_splits_k: bool, pub out: &'static str, pub module: &'static str, pub symbol: &'static str, pub smem_bytes: u32, pub threads: u32, pub body: &'static str, pub c_box: u32, pub store_warp: bool, pub scale_tma: bool, pub scale_slab: bool }}\n\
         pub static CUBINS: &[CubinImage] = &[\n{cubins}];\n\
         pub static GEMM_INSTANCES: &[GemmInstance] = &[\n{table}];\n\
         /// ptxas -v output of this build.\n\
         pub static RESOURCE_REPORT: &str = include_str!({:?});\n",
        out_dir.join("cuda_resource_report.txt").display().to_string()
    );
    std::fs::write(out_dir.join("cuda_kernels.rs"), src).expect("write cuda_kernels.rs");
}
