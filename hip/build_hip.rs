//! Build step for feature `rocm` (called from build.rs): compiles `hip/*.hip` into one raw
//! code object per AMD architecture, checks the compiler's resource report, and builds the
//! host emulation library that runs the same sources on the CPU in tests.
//!
//! Compiler, first found wins:
//! 1. `BLOCKFP8_HIP_CLANG`: a HIP-capable clang (e.g. Debian's clang-22);
//! 2. hipcc: `HIPCC`, then `$ROCM_PATH/bin/hipcc`, `$HIP_PATH/bin/hipcc`, `/opt/rocm/bin/hipcc`, PATH;
//! 3. `clang-22` on PATH.
//!
//! The kernels include no HIP header (`-nogpuinc -nogpulib`), so any of these works.
//! Architectures: `BLOCKFP8_HIP_ARCHS` (comma-separated, default "gfx942,gfx950"). An
//! architecture the compiler cannot target (or that the kernels do not support) is skipped
//! with a cargo warning; if none compiles the build fails and says what to install.
//! Each architecture is compiled to an assembly listing (`-S`), which is then assembled and
//! linked into the code object, so the static report (hip/static_report.rs: resources and
//! the main loop's instruction mix per kernel) is read from exactly the shipped
//! instructions. The build fails if a GEMM kernel of the default set breaks a bound stated
//! in hip/static_report.rs (spills, scratch, byte loads in a main loop, VALU/MFMA above the
//! Triton anchor, occupancy below it).
//!
//! Outputs in OUT_DIR: `blockfp8_<arch>.co`, `blockfp8_<arch>.s`, `hip_resource_report.txt`,
//! `hip_static_report.md` (in OUT_DIR), `hip_kernels.rs`
//! (code objects, the compiled GEMM instantiations, the report), `hip_emu.rs` (the
//! emulated launchers) and the static library `blockfp8_hip_emu`. Generated sources go
//! to OUT_DIR/hip_gen, never into the repository.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const OUTS: [&str; 3] = ["bf16", "f16", "f32"];
const SUPPORTED_ARCHS: [&str; 2] = ["gfx942", "gfx950"];
const OP_SOURCES: [&str; 5] =
    ["quant_per_token_group.hip", "quant_weight_blocks.hip", "convert_fnuz.hip", "scale_reduce.hip", "gemm_block_fp8.hip"];

#[path = "static_report.rs"]
mod static_report;

/// One GEMM instantiation (template arguments of gemm_block_fp8_impl). GROUP_M is a
/// runtime argument and the pipeline depth is fixed (one LDS buffer, one K tile prefetched
/// into registers: `s2`), so neither multiplies the instantiations.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Cfg {
    bm: u32,
    bn: u32,
    bk: u32,
    w: u32,
    i: u32,
}

impl Cfg {
    fn tag(&self) -> String {
        format!("m{}n{}k{}w{}s2i{}", self.bm, self.bn, self.bk, self.w, self.i)
    }
    /// Mirrors the static_asserts of GemmLayout plus a register budget (accumulator, total
    /// and the prefetched tile per lane <= 192 VGPRs) so the full set compiles without spills.
    fn legal(&self) -> bool {
        let threads = 64 * self.w;
        let waves_ok = (0..=3).map(|p| 1u32 << p).filter(|wn| *wn <= self.w).any(|wn| {
            let wm = self.w / wn;
            wm * wn == self.w && self.bn % (wn * self.i) == 0 && self.bm % (wm * self.i) == 0
        });
        let cr = self.bk / 16;
        let rpp = threads / cr;
        let chunks_ok = |rows: u32| {
            let ch = rows * cr;
            (ch % threads == 0 || ch < threads) && (ch <= threads || rpp % 8 == 0)
        };
        let lds = (self.bm + self.bn) * self.bk;
        let regs = 2 * self.bm * self.bn / threads + (self.bm + self.bn) * self.bk / (4 * threads);
        waves_ok && (self.bk == 128 || self.bk == 256) && chunks_ok(self.bm) && chunks_ok(self.bn) && lds <= 65536 && regs <= 192
    }
}

const fn cfg(bm: u32, bn: u32, bk: u32, w: u32, i: u32) -> Cfg {
    Cfg { bm, bn, bk, w, i }
}

/// Compiled by default (and by CI) for every output type. The first is the kernel's
/// default config (src/backend/hip/kernels.rs default_gemm_config).
const DEFAULT_ALL_OUTS: [Cfg; 3] = [
    cfg(64, 128, 128, 4, 32),  // default: vLLM's 64x128x128 tile on 32x32x16 MFMA
    cfg(128, 128, 128, 4, 32), // large M: 128x128x128, 2x2 MFMA tiles per wave
    cfg(16, 64, 256, 4, 16),   // decode: skinny 16x64x256 on 16x16x32 MFMA
];

/// Compiled by default for bf16 output: every tile vLLM's AMD_Instinct_MI300X / MI325X
/// block-FP8 files name (BLOCK_K 128, 4 warps, matrix_instr_nonkdim 16; GROUP_SIZE_M is a
/// runtime argument), which includes the four Triton anchor tiles.
const DEFAULT_BF16: [Cfg; 12] = [
    cfg(16, 64, 128, 4, 16),
    cfg(16, 128, 128, 4, 16),
    cfg(32, 32, 128, 4, 16),
    cfg(32, 64, 128, 4, 16),
    cfg(32, 128, 128, 4, 16),
    cfg(64, 32, 128, 4, 16),
    cfg(64, 64, 128, 4, 16),
    cfg(64, 128, 128, 4, 16),
    cfg(128, 32, 128, 4, 16),
    cfg(128, 64, 128, 4, 16),
    cfg(128, 128, 128, 4, 16),
    cfg(64, 64, 128, 4, 32),
];

/// The tuning candidates (feature `tuning-full`, bf16 output): vLLM's search space
/// (BLOCK_M 16..256, BLOCK_N 32..256, BLOCK_K 128/256, 4/8 waves) with both MFMA shapes,
/// kept where it tiles, fits 64 KiB of LDS and the register budget.
fn full_set() -> Vec<Cfg> {
    let mut v = Vec::new();
    for bm in [16, 32, 64, 128, 256] {
        for bn in [32, 64, 128, 256] {
            for bk in [128, 256] {
                for w in [4, 8] {
                    for i in [16, 32] {
                        let c = cfg(bm, bn, bk, w, i);
                        if c.legal() && !DEFAULT_ALL_OUTS.contains(&c) && !DEFAULT_BF16.contains(&c) {
                            v.push(c);
                        }
                    }
                }
            }
        }
    }
    v
}

#[derive(Default, Clone)]
struct Resource {
    name: String,
    fields: Vec<(String, String)>,
}

impl Resource {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    fn num(&self, key: &str) -> u64 {
        self.get(key).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
    }
}

/// Parses `-Rpass-analysis=kernel-resource-usage` remarks: "Function Name: X" starts a
/// kernel, then "Key: value" lines.
fn parse_resource_report(stderr: &str) -> Vec<Resource> {
    let mut out: Vec<Resource> = Vec::new();
    for line in stderr.lines() {
        let Some(pos) = line.find("remark:") else { continue };
        let body = line[pos + 7..].split(" [-Rpass").next().unwrap_or("").trim();
        let Some((key, value)) = body.split_once(':') else { continue };
        let (key, value) = (key.trim().to_string(), value.trim().to_string());
        if key == "Function Name" {
            out.push(Resource { name: value, fields: Vec::new() });
        } else if let Some(last) = out.last_mut() {
            last.fields.push((key, value));
        }
    }
    out
}

fn find_compiler() -> Option<(PathBuf, &'static str)> {
    if let Some(p) = std::env::var_os("BLOCKFP8_HIP_CLANG") {
        return Some((PathBuf::from(p), "BLOCKFP8_HIP_CLANG"));
    }
    if let Some(p) = std::env::var_os("HIPCC") {
        return Some((PathBuf::from(p), "HIPCC"));
    }
    for var in ["ROCM_PATH", "HIP_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            let p = Path::new(&root).join("bin/hipcc");
            if p.is_file() {
                return Some((p, "ROCM_PATH/HIP_PATH"));
            }
        }
    }
    let rocm = Path::new("/opt/rocm/bin/hipcc");
    if rocm.is_file() {
        return Some((rocm.to_path_buf(), "/opt/rocm"));
    }
    for name in ["hipcc", "clang-22"] {
        if let Some(p) = which(name) {
            return Some((p, "PATH"));
        }
    }
    None
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
}

fn device_args(arch: &str, include: &Path, src: &Path, out: &Path, listing: bool) -> Vec<String> {
    [
        "-x", "hip", "-std=c++17", "-nogpuinc", "-nogpulib", "--cuda-device-only", "--no-gpu-bundle-output", "-O3",
        "-Rpass-analysis=kernel-resource-usage",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--offload-arch={arch}"),
        format!("-I{}", include.display()),
    ])
    .chain(listing.then(|| "-S".to_string()))
    .chain([
        src.display().to_string(),
        "-o".into(),
        out.display().to_string(),
    ])
    .collect()
}

struct ArchResult {
    arch: String,
    code_object: Option<PathBuf>,
    listing: Option<PathBuf>,
    report: Vec<Resource>,
    skipped: Option<String>,
}

fn compile_arch(compiler: &Path, arch: &str, hip_dir: &Path, gen_dir: &Path, src: &Path, out_dir: &Path) -> ArchResult {
    let mut res = ArchResult { arch: arch.to_string(), code_object: None, listing: None, report: Vec::new(), skipped: None };
    if !SUPPORTED_ARCHS.contains(&arch) {
        res.skipped = Some(format!("{arch} is not a supported architecture (the kernels target {SUPPORTED_ARCHS:?})"));
        return res;
    }
    // Probe: can this compiler target the architecture at all?
    let probe = gen_dir.join(format!("probe_{arch}.hip"));
    std::fs::write(&probe, "extern \"C\" __attribute__((global)) void probe(int* p) { *p = 1; }\n").expect("write probe");
    let probe_out = gen_dir.join(format!("probe_{arch}.co"));
    match Command::new(compiler).args(device_args(arch, hip_dir, &probe, &probe_out, false)).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr);
            let first = why.lines().find(|l| !l.trim().is_empty()).map(|l| l.trim().to_string());
            res.skipped = Some(format!("{} cannot target {arch}: {}", compiler.display(), first.unwrap_or_else(|| o.status.to_string())));
            return res;
        }
        Err(e) => {
            res.skipped = Some(format!("cannot run {}: {e}", compiler.display()));
            return res;
        }
    }
    // Listing first, then the code object assembled and linked from that listing.
    let listing = out_dir.join(format!("blockfp8_{arch}.s"));
    let o = Command::new(compiler).args(device_args(arch, hip_dir, src, &listing, true)).output().expect("run the HIP compiler");
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    if !o.status.success() {
        let errors: String = stderr.lines().filter(|l| !l.contains("remark:")).take(60).collect::<Vec<_>>().join("\n");
        panic!("compiling the HIP kernels for {arch} with {} failed:\n{errors}", compiler.display());
    }
    let co = out_dir.join(format!("blockfp8_{arch}.co"));
    let o = Command::new(compiler)
        .args(["-target", "amdgcn-amd-amdhsa", &format!("-mcpu={arch}"), "-nostdlib", "-x", "assembler"])
        .arg(&listing)
        .arg("-o")
        .arg(&co)
        .output()
        .expect("run the HIP compiler as assembler");
    if !o.status.success() {
        panic!("assembling {} for {arch} failed:\n{}", listing.display(), String::from_utf8_lossy(&o.stderr));
    }
    res.report = parse_resource_report(&stderr);
    res.code_object = Some(co);
    res.listing = Some(listing);
    res
}

fn write_instances(out: &mut String, cfgs: &[Cfg], outs: &[&str]) {
    for c in cfgs {
        for o in outs {
            let _ = writeln!(
                out,
                "BFP8_GEMM_INSTANCE({}, {o}, {}, {}, {}, {}, {})",
                c.tag(),
                c.bm,
                c.bn,
                c.bk,
                c.w,
                c.i
            );
        }
    }
}

fn kernel_source(cfgs_all_outs: &[Cfg], cfgs_bf16: &[Cfg], prelude: &str) -> String {
    // A tile in both lists is instantiated once.
    let cfgs_bf16: Vec<Cfg> = cfgs_bf16.iter().copied().filter(|c| !cfgs_all_outs.contains(c)).collect();
    let mut s = String::from("// Generated by hip/build_hip.rs; do not edit.\n");
    s += prelude;
    for f in OP_SOURCES {
        let _ = writeln!(s, "#include \"{f}\"");
    }
    write_instances(&mut s, cfgs_all_outs, &OUTS);
    write_instances(&mut s, &cfgs_bf16, &["bf16"]);
    s
}

pub fn build(out_dir: &Path) {
    println!("cargo:rerun-if-changed=hip");
    for var in ["BLOCKFP8_HIP_CLANG", "BLOCKFP8_HIP_ARCHS", "HIPCC", "ROCM_PATH", "HIP_PATH", "CXX"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let hip_dir = manifest.join("hip");
    let gen_dir = out_dir.join("hip_gen");
    std::fs::create_dir_all(&gen_dir).expect("create OUT_DIR/hip_gen");

    let mut bf16_set: Vec<Cfg> = DEFAULT_BF16.to_vec();
    let full = if std::env::var_os("CARGO_FEATURE_TUNING_FULL").is_some() { full_set() } else { Vec::new() };
    bf16_set.extend(&full);
    let device_src = gen_dir.join("blockfp8_kernels.hip");
    std::fs::write(&device_src, kernel_source(&DEFAULT_ALL_OUTS, &bf16_set, "")).expect("write kernel source");

    // The emulation library builds on its own thread while the device compiles run.
    let emu_thread = {
        let (hip_dir, gen_dir) = (hip_dir.clone(), gen_dir.clone());
        std::thread::spawn(move || build_emulation(&hip_dir, &gen_dir))
    };

    let archs: Vec<String> = std::env::var("BLOCKFP8_HIP_ARCHS")
        .unwrap_or_else(|_| "gfx942,gfx950".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let install_hint = "run `bash ci/install-rocm-toolchain.sh` (Debian's clang-22, lld-22 and HIP runtime) or install ROCm's hipcc, \
                        or point BLOCKFP8_HIP_CLANG at a HIP-capable clang";
    let Some((compiler, found_by)) = find_compiler() else {
        panic!("feature `rocm`: no HIP compiler found (BLOCKFP8_HIP_CLANG, HIPCC, ROCM_PATH, HIP_PATH, /opt/rocm, PATH); {install_hint}");
    };
    let results: Vec<ArchResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = archs
            .iter()
            .map(|arch| {
                let (compiler, hip_dir, gen_dir, device_src) = (&compiler, &hip_dir, &gen_dir, &device_src);
                scope.spawn(move || compile_arch(compiler, arch, hip_dir, gen_dir, device_src, out_dir))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("HIP compile thread panicked")).collect()
    });
    emu_thread.join().expect("emulation build panicked");

    for r in &results {
        if let Some(why) = &r.skipped {
            println!("cargo:warning=blockfp8 rocm: skipping {}: {why}", r.arch);
        }
    }
    if results.iter().all(|r| r.code_object.is_none()) {
        panic!(
            "feature `rocm`: no architecture of {archs:?} could be compiled with {} (found via {found_by}); {install_hint}",
            compiler.display()
        );
    }

    // Resource report (the compiler's remarks), then the static report from the listings.
    let mut report = format!("# HIP kernel resources ({}; -Rpass-analysis=kernel-resource-usage)\n", compiler.display());
    for r in results.iter().filter(|r| r.code_object.is_some()) {
        for k in &r.report {
            let fields: Vec<String> = k.fields.iter().map(|(a, b)| format!("{a}={b}")).collect();
            let _ = writeln!(report, "{} {} {}", r.arch, k.name, fields.join("; "));
        }
    }
    std::fs::write(out_dir.join("hip_resource_report.txt"), &report).expect("write hip_resource_report.txt");

    let all = instances(&full);
    let mut md = format!(
        "Static report of the HIP GEMM kernels ({}), read from the assembly listing each code object is assembled from. \
         One trip of the main loop = one BLOCK_K tile, per wave; VALU/MFMA = 4 x VALU / MFMA cycles (32 per 32x32x16, 16 per 16x16x32); \
         occ = waves per SIMD, registers (compiler) and LDS (64 KiB per CU on gfx942, 160 KiB on gfx950) combined. \
         No AMD GPU was used: instruction counts, not timings.\n\n{}\n",
        compiler.display(),
        static_report::MARKDOWN_HEADER
    );
    let mut violations = Vec::new();
    for r in results.iter().filter(|r| r.listing.is_some()) {
        let listing = std::fs::read_to_string(r.listing.as_ref().unwrap()).expect("read the listing");
        let stats = static_report::parse_listing(&listing, "gemm_block_fp8_");
        let lds_per_cu = if r.arch == "gfx950" { 160 * 1024 } else { 64 * 1024 };
        for (c, o, _, default) in &all {
            let sym = format!("gemm_block_fp8_{}_{o}", c.tag());
            let Some(k) = stats.iter().find(|k| k.name == sym) else {
                violations.push(format!("{} {sym}: not found in the listing", r.arch));
                continue;
            };
            let reg_occ = r.report.iter().find(|x| x.name == sym).map(|x| x.num("Occupancy [waves/SIMD]") as u32).unwrap_or(0);
            let occ = k.occupancy(reg_occ, 64 * c.w, lds_per_cu);
            md += &static_report::markdown_rows(&r.arch, k, occ);
            if let Err(why) = static_report::check(k, (c.bm, c.bn, c.bk, c.i, c.w), occ, r.arch == "gfx942") {
                if *default {
                    violations.push(format!("{} {sym}: {why}", r.arch));
                } else {
                    println!("cargo:warning=blockfp8 rocm: tuning candidate {} {sym}: {why}", r.arch);
                }
            }
        }
    }
    std::fs::write(out_dir.join("hip_static_report.md"), &md).expect("write hip_static_report.md");
    if !violations.is_empty() {
        panic!(
            "GEMM kernels of the default set break the static bounds of hip/static_report.rs (full report: {}):\n{}",
            out_dir.join("hip_static_report.md").display(),
            violations.join("\n")
        );
    }

    // hip_kernels.rs: code objects, listings, GEMM instantiations, reports.
    let mut rs = String::from("// Generated by hip/build_hip.rs.\n");
    rs += "pub static CODE_OBJECTS: &[(&str, &[u8])] = &[\n";
    for r in &results {
        if let Some(co) = &r.code_object {
            let _ = writeln!(rs, "    ({:?}, include_bytes!({:?})),", r.arch, co.display().to_string());
        }
    }
    rs += "];\n/// (arch, path of the assembly listing the code object was assembled from)\n";
    rs += "pub static LISTINGS: &[(&str, &str)] = &[\n";
    for r in &results {
        if let Some(l) = &r.listing {
            let _ = writeln!(rs, "    ({:?}, {:?}),", r.arch, l.display().to_string());
        }
    }
    rs += "];\n/// (symbol, BLOCK_M, BLOCK_N, BLOCK_K, warps, MFMA nonkdim, output, emulated, default set)\n";
    rs += "#[allow(clippy::type_complexity)]\npub static GEMM_INSTANCES: &[(&str, u32, u32, u32, u32, u32, &str, bool, bool)] = &[\n";
    for (c, o, emulated, default) in &all {
        let sym = format!("gemm_block_fp8_{}_{o}", c.tag());
        let _ = writeln!(rs, "    ({sym:?}, {}, {}, {}, {}, {}, {o:?}, {emulated}, {default}),", c.bm, c.bn, c.bk, c.w, c.i);
    }
    rs += "];\n";
    let _ = writeln!(rs, "pub static RESOURCE_REPORT: &str = include_str!({:?});", out_dir.join("hip_resource_report.txt").display().to_string());
    let _ = writeln!(rs, "pub static STATIC_REPORT: &str = include_str!({:?});", out_dir.join("hip_static_report.md").display().to_string());
    std::fs::write(out_dir.join("hip_kernels.rs"), rs).expect("write hip_kernels.rs");
}

/// Every GEMM instantiation: (config, output, emulated, in the default set). The default
/// set (all outputs for DEFAULT_ALL_OUTS, bf16 for DEFAULT_BF16) is also emulated; the
/// `tuning-full` candidates are device-only.
fn instances(full: &[Cfg]) -> Vec<(Cfg, &'static str, bool, bool)> {
    let mut v = Vec::new();
    for c in DEFAULT_ALL_OUTS {
        for o in OUTS {
            v.push((c, o, true, true));
        }
    }
    for c in DEFAULT_BF16.iter().filter(|c| !DEFAULT_ALL_OUTS.contains(c)) {
        v.push((*c, "bf16", true, true));
    }
    for c in full {
        v.push((*c, "bf16", false, false));
    }
    v
}

/// Host build of the same kernel sources against hip/emu (default set only), plus the
/// table of emulated GEMM launchers for src/backend/hip/emulator.rs.
fn build_emulation(hip_dir: &Path, gen_dir: &Path) {
    let mut files = vec![gen_dir.join("emu_runtime.cpp")];
    std::fs::write(&files[0], "// Generated by hip/build_hip.rs.\n#include \"emu/emu_runtime_impl.h\"\n").expect("write emu runtime");
    for arch in SUPPORTED_ARCHS {
        let prelude = format!("#define BLOCKFP8_EMU 1\n#define BLOCKFP8_EMU_{} 1\n", arch.to_uppercase());
        let f = gen_dir.join(format!("emu_{arch}.cpp"));
        std::fs::write(&f, kernel_source(&DEFAULT_ALL_OUTS, &DEFAULT_BF16, &prelude)).expect("write emu source");
        files.push(f);
    }
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .debug(false)
        .include(hip_dir)
        .flag_if_supported("-Wno-unknown-pragmas")
        .files(&files)
        .compile("blockfp8_hip_emu");

    let sig = "a: *const u8, a_scales: *const f32, b: *const u8, b_scales: *const f32, c: *mut c_void, m: i32, n: i32, k: i32, as_stride_m: i32, as_stride_kb: i32, group_m: i32, k_splits: i32, workspace: *mut c_void, gx: u32, gy: u32, gz: u32";
    let mut decls = String::new();
    let mut table = String::from("pub(crate) static EMU_GEMMS: &[(&str, &str, EmuGemmFn)] = &[\n");
    for arch in SUPPORTED_ARCHS {
        for (c, o, emulated, _) in instances(&[]) {
            if emulated {
                let sym = format!("gemm_block_fp8_{}_{o}", c.tag());
                let _ = writeln!(decls, "    fn emu_{sym}_{arch}({sig}) -> i32;");
                let _ = writeln!(table, "    ({sym:?}, {arch:?}, emu_{sym}_{arch}),");
            }
        }
    }
    let rs = format!("// Generated by hip/build_hip.rs.\nextern \"C\" {{\n{decls}}}\n{table}];\n");
    std::fs::write(gen_dir.parent().expect("gen dir has a parent").join("hip_emu.rs"), rs).expect("write hip_emu.rs");
}
