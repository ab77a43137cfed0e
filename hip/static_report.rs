//! Static report of the HIP GEMM kernels, read from the compiler's assembly listing (the
//! listing that hip/build_hip.rs then assembles into the shipped code object, so the two
//! are the same instructions). No AMD GPU is involved: these are instruction counts and
//! resources, not timings.
//!
//! Per kernel: VGPR/AGPR/SGPR, LDS, scratch, spills (the listing's amdhsa metadata), the
//! compiler's register occupancy (its resource remark) combined with the LDS limit, and for
//! every loop that holds MFMAs (LLVM's loop comments: "Loop Header: Depth=N" and
//! "in Loop: Header=BBx_y Depth=N") the instruction mix of one trip. "VALU/MFMA" follows the
//! convention of the Triton anchor table (the AMD static toolkit's anchor table, kept outside this repository): 4 cycles per
//! VALU instruction over the MFMA cycles (32 per 32x32x16, 16 per 16x16x32).
//!
//! The bounds the build enforces are the constants below (the one place they are stated);
//! `tests/hip_codeobj.rs` re-reads the listings and checks them again.
//! Shared by the build script (`#[path]` from hip/build_hip.rs) and the library
//! (src/backend/hip/kernels.rs), so it depends on nothing but std.
#![allow(dead_code)]

use std::fmt::Write as _;

/// vLLM's Triton block-FP8 kernel compiled for gfx942 with triton 3.9.0
/// (the `triton_gfx942.py` script of the project's AMD static toolkit (kept outside this repository), bf16 out, K = 7168, nonkdim 16, 4 warps),
/// measured here 2026-12-01: (BLOCK_M, BLOCK_N, BLOCK_K, VALU/MFMA, waves per SIMD with LDS).
pub const TRITON_ANCHORS: &[(u32, u32, u32, f64, u32)] =
    &[(32, 32, 128, 0.88, 8), (16, 64, 128, 1.06, 6), (64, 64, 128, 0.55, 4), (64, 128, 128, 0.49, 2), (128, 128, 128, 0.39, 2)];

/// Hot-loop VALU/MFMA bound for a tile without a Triton anchor (the best anchor's 0.39).
pub const MAX_VALU_PER_MFMA_UNANCHORED: f64 = 0.39;
/// Bound for the unaligned-rows loop (K % 16 != 0 or unaligned A/B: five dword loads and
/// four v_alignbyte per 16 bytes, and the K mask in every trip). It is the correctness path
/// for inputs no real model has (DeepSeek-V3's K are multiples of 128), not the hot path;
/// the bound keeps it at or below the previous generation's hot path at 16x64 (4.44).
pub const MAX_VALU_PER_MFMA_UNALIGNED: f64 = 4.0;
/// Loads narrower than a dword: never allowed in a GEMM main loop.
pub const BYTE_LOADS: [&str; 8] = [
    "buffer_load_ubyte",
    "buffer_load_sbyte",
    "buffer_load_ushort",
    "buffer_load_sshort",
    "global_load_ubyte",
    "global_load_sbyte",
    "global_load_ushort",
    "global_load_sshort",
];

/// The instruction mix of one trip of a loop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoopStats {
    pub header: String,
    pub instructions: u32,
    pub mfma: u32,
    pub mfma_cycles: u32,
    pub valu: u32,
    pub accvgpr: u32,
    pub salu: u32,
    pub vmem_loads: u32,
    pub vmem_stores: u32,
    pub byte_loads: u32,
    pub ds_reads: u32,
    pub ds_writes: u32,
    pub barriers: u32,
    pub waits: u32,
    pub alignbyte: u32,
}

impl LoopStats {
    pub fn valu_per_mfma(&self) -> f64 {
        if self.mfma_cycles == 0 {
            f64::INFINITY
        } else {
            4.0 * self.valu as f64 / self.mfma_cycles as f64
        }
    }
    /// The unaligned-rows loop is the one that realigns with v_alignbyte.
    pub fn is_unaligned_path(&self) -> bool {
        self.alignbyte > 0
    }
    fn count(&mut self, mnemonic: &str) {
        self.instructions += 1;
        let m = mnemonic;
        if let Some(rest) = m.strip_prefix("v_mfma_") {
            self.mfma += 1;
            self.mfma_cycles += if rest.contains("32x32") { 32 } else { 16 };
        } else if m.starts_with("v_accvgpr") {
            self.accvgpr += 1;
        } else if m.starts_with("v_") {
            self.valu += 1;
            if m.starts_with("v_alignbyte") {
                self.alignbyte += 1;
            }
        } else if m.starts_with("buffer_load") || m.starts_with("global_load") {
            self.vmem_loads += 1;
            if BYTE_LOADS.iter().any(|b| m.starts_with(b)) {
                self.byte_loads += 1;
            }
        } else if m.starts_with("buffer_store") || m.starts_with("global_store") {
            self.vmem_stores += 1;
        } else if m.starts_with("ds_read") || m.starts_with("ds_load") {
            self.ds_reads += 1;
        } else if m.starts_with("ds_write") || m.starts_with("ds_store") {
            self.ds_writes += 1;
        } else if m == "s_barrier" {
            self.barriers += 1;
        } else if m.starts_with("s_waitcnt") {
            self.waits += 1;
        } else if m.starts_with("s_") {
            self.salu += 1;
        }
    }
}

/// Resources and MFMA loops of one kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelStats {
    pub name: String,
    pub vgpr: u32,
    pub agpr: u32,
    pub sgpr: u32,
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
    pub vgpr_spill: u32,
    pub sgpr_spill: u32,
    pub loops: Vec<LoopStats>,
}

impl KernelStats {
    /// The aligned main loop: the MFMA loop that does not realign.
    pub fn hot_loop(&self) -> Option<&LoopStats> {
        self.loops.iter().find(|l| !l.is_unaligned_path())
    }
    pub fn unaligned_loop(&self) -> Option<&LoopStats> {
        self.loops.iter().find(|l| l.is_unaligned_path())
    }
    /// Waves per SIMD: the compiler's register occupancy `reg_occupancy` and the workgroups
    /// of `threads` that fit `lds_per_cu` bytes (4 SIMDs per CU, 8 waves per SIMD at most).
    pub fn occupancy(&self, reg_occupancy: u32, threads: u32, lds_per_cu: u32) -> u32 {
        let waves_per_group = threads.div_ceil(64);
        let by_lds = lds_per_cu.checked_div(self.lds_bytes).map_or(8, |groups| groups * waves_per_group / 4);
        reg_occupancy.min(by_lds).min(8)
    }
}

fn label_of(line: &str) -> Option<String> {
    let code = line.split(';').next().unwrap_or("");
    let t = code.trim_end();
    if let Some(name) = t.strip_suffix(':') {
        if !name.is_empty() && !name.starts_with(char::is_whitespace) && !name.contains(' ') {
            return Some(name.to_string());
        }
    }
    // Fall-through blocks appear as a comment "; %bb.3:".
    let c = line.trim_start();
    if let Some(rest) = c.strip_prefix("; %bb.") {
        return rest.split(':').next().map(|n| format!("%bb.{n}"));
    }
    None
}

/// (header, depth) a block belongs to, from a loop comment on its label line or the
/// comment line right after it.
fn loop_of(comment: &str, label: &str) -> Option<(String, u32)> {
    if let Some(p) = comment.find("Loop Header: Depth=") {
        let depth = comment[p + 19..].split_whitespace().next()?.parse().ok()?;
        return Some((label.trim_start_matches(".L").to_string(), depth));
    }
    if let Some(p) = comment.find("in Loop: Header=") {
        let rest = &comment[p + 16..];
        let header = rest.split_whitespace().next()?.to_string();
        let depth = rest.split("Depth=").nth(1)?.split_whitespace().next()?.parse().ok()?;
        return Some((header, depth));
    }
    None
}

/// Parses one function's text: its MFMA loops.
fn parse_loops(body: &str) -> Vec<LoopStats> {
    let mut loops: Vec<(String, u32, LoopStats)> = Vec::new();
    let mut current: Option<(String, u32)> = None;
    let mut fresh_block = false;
    let mut label = String::new();
    for line in body.lines() {
        if let Some(l) = label_of(line) {
            label = l;
            current = loop_of(line, &label);
            fresh_block = true;
            continue;
        }
        let code = line.split(';').next().unwrap_or("").trim();
        if code.is_empty() {
            if fresh_block && current.is_none() {
                current = loop_of(line, &label);
            }
            continue;
        }
        if code.starts_with('.') {
            continue;
        }
        fresh_block = false;
        let mnemonic = code.split_whitespace().next().unwrap_or("");
        if !mnemonic.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
            continue;
        }
        if let Some((h, d)) = &current {
            let idx = match loops.iter().position(|(lh, ld, _)| lh == h && ld == d) {
                Some(i) => i,
                None => {
                    loops.push((h.clone(), *d, LoopStats { header: h.clone(), ..Default::default() }));
                    loops.len() - 1
                }
            };
            loops[idx].2.count(mnemonic);
        }
    }
    loops.into_iter().map(|(_, _, s)| s).filter(|s| s.mfma > 0).collect()
}

fn meta_num(block: &str, key: &str) -> u32 {
    block
        .lines()
        .find_map(|l| l.trim().trim_start_matches("- ").strip_prefix(key).map(|v| v.trim_start_matches(':').trim().to_string()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Every kernel of an AMDGPU assembly listing (clang -S) whose name starts with `prefix`.
pub fn parse_listing(text: &str, prefix: &str) -> Vec<KernelStats> {
    // Metadata: the amdhsa.kernels YAML list at the end, one "- .agpr_count" entry per kernel.
    let meta_start = text.find("amdhsa.kernels:").unwrap_or(text.len());
    let meta = &text[meta_start..];
    let mut entries: Vec<&str> = Vec::new();
    let mut rest = meta;
    while let Some(p) = rest.find("\n  - ") {
        let after = &rest[p + 1..];
        let end = after[4..].find("\n  - ").map(|e| e + 4).unwrap_or(after.len());
        entries.push(&after[..end]);
        rest = &after[end..];
    }
    let mut out = Vec::new();
    let code = &text[..meta_start];
    let mut pos = 0;
    while let Some(p) = code[pos..].find(".type\t") {
        let start = pos + p;
        let line_end = code[start..].find('\n').map(|e| start + e).unwrap_or(code.len());
        let decl = &code[start + 6..line_end];
        pos = line_end;
        let Some(name) = decl.strip_suffix(",@function").map(str::trim) else { continue };
        if !name.starts_with(prefix) {
            continue;
        }
        let body_end = code[pos..].find(".Lfunc_end").map(|e| pos + e).unwrap_or(code.len());
        let loops = parse_loops(&code[pos..body_end]);
        let e = entries.iter().find(|e| e.lines().any(|l| l.trim().strip_prefix(".name:").map(str::trim) == Some(name))).copied().unwrap_or("");
        out.push(KernelStats {
            name: name.to_string(),
            vgpr: meta_num(e, ".vgpr_count"),
            agpr: meta_num(e, ".agpr_count"),
            sgpr: meta_num(e, ".sgpr_count"),
            lds_bytes: meta_num(e, ".group_segment_fixed_size"),
            scratch_bytes: meta_num(e, ".private_segment_fixed_size"),
            vgpr_spill: meta_num(e, ".vgpr_spill_count"),
            sgpr_spill: meta_num(e, ".sgpr_spill_count"),
            loops,
        });
        pos = body_end;
    }
    out
}

/// The Triton anchor at a tile, if measured: (VALU/MFMA, waves per SIMD).
pub fn anchor(bm: u32, bn: u32, bk: u32) -> Option<(f64, u32)> {
    TRITON_ANCHORS.iter().find(|a| (a.0, a.1, a.2) == (bm, bn, bk)).map(|a| (a.3, a.4))
}

/// What a kernel's static report must satisfy; `Err` lists every violation.
/// `tile` = (BLOCK_M, BLOCK_N, BLOCK_K, MFMA nonkdim, waves); `occupancy` with LDS.
pub fn check(k: &KernelStats, tile: (u32, u32, u32, u32, u32), occupancy: u32, gfx942: bool) -> Result<(), String> {
    let (bm, bn, bk, nk, w) = tile;
    let mut why = Vec::new();
    if k.scratch_bytes > 0 || k.vgpr_spill > 0 || k.sgpr_spill > 0 {
        why.push(format!("scratch {} B, {} VGPR and {} SGPR spills", k.scratch_bytes, k.vgpr_spill, k.sgpr_spill));
    }
    for l in &k.loops {
        if l.byte_loads > 0 {
            why.push(format!("loop {} has {} sub-dword loads", l.header, l.byte_loads));
        }
    }
    // One trip of the main loop = one BLOCK_K tile: every MFMA of it, none duplicated.
    let per_trip = bm * bn * bk / (nk * nk * if nk == 32 { 16 } else { 32 } * w);
    match k.hot_loop() {
        None => why.push("no aligned MFMA main loop found in the listing".into()),
        Some(h) => {
            if h.mfma != per_trip {
                why.push(format!("main loop {} has {} MFMAs per trip, the tile needs {per_trip}", h.header, h.mfma));
            }
            let (bound, min_occ) = match anchor(bm, bn, bk) {
                Some((v, o)) => (v, if gfx942 { o } else { 1 }),
                None => (MAX_VALU_PER_MFMA_UNANCHORED, 1),
            };
            if h.valu_per_mfma() > bound {
                why.push(format!("main loop VALU/MFMA {:.2} above the bound {bound:.2}", h.valu_per_mfma()));
            }
            if occupancy < min_occ {
                why.push(format!("{occupancy} waves/SIMD, the Triton anchor has {min_occ}"));
            }
        }
    }
    if let Some(u) = k.unaligned_loop() {
        if u.valu_per_mfma() > MAX_VALU_PER_MFMA_UNALIGNED {
            why.push(format!("unaligned-rows loop VALU/MFMA {:.2} above {MAX_VALU_PER_MFMA_UNALIGNED}", u.valu_per_mfma()));
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

/// Header of the markdown table [`markdown_rows`] fills.
pub const MARKDOWN_HEADER: &str = "| arch | kernel | VGPR | AGPR | SGPR | LDS B | occ | loop | instrs | MFMA | VALU | VALU/MFMA | SALU | VMEM ld | DS rd/wr | barriers | waits | byte loads |\n|---|---|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|";

/// Markdown rows (one per MFMA loop) for one kernel.
pub fn markdown_rows(arch: &str, k: &KernelStats, occupancy: u32) -> String {
    let mut s = String::new();
    for l in &k.loops {
        let kind = if l.is_unaligned_path() { "unaligned rows" } else { "main" };
        let _ = writeln!(
            s,
            "| {arch} | {} | {} | {} | {} | {} | {occupancy} | {kind} | {} | {} | {} | {:.2} | {} | {} | {}/{} | {} | {} | {} |",
            k.name, k.vgpr, k.agpr, k.sgpr, k.lds_bytes, l.instructions, l.mfma, l.valu, l.valu_per_mfma(), l.salu, l.vmem_loads,
            l.ds_reads, l.ds_writes, l.barriers, l.waits, l.byte_loads
        );
    }
    s
}
