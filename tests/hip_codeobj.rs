//! Static checks of the embedded AMD code objects: they are AMDGPU ELF files, their GEMM
//! kernels use the fp8 MFMA instruction their config names (disassembly), and the
//! compiler's resource report shows no spills, no scratch and LDS within 64 KiB on gfx942.
#![cfg(feature = "rocm")]

use std::collections::HashMap;
use std::process::Command;

use blockfp8::backend::hip::kernels::{self, GemmKernel};
use blockfp8::config::ConfigTable;
use blockfp8::gemm::OutDtype;

const EM_AMDGPU: u16 = 224;

#[test]
fn code_objects_are_amdgpu_elf_for_the_built_architectures() {
    let archs = kernels::compiled_archs();
    assert!(!archs.is_empty(), "the build compiled no architecture");
    for arch in &archs {
        let co = kernels::code_object(arch).unwrap();
        assert_eq!(&co[..4], b"\x7fELF", "{arch}: not an ELF file");
        let machine = u16::from_le_bytes([co[18], co[19]]);
        assert_eq!(machine, EM_AMDGPU, "{arch}: e_machine {machine}");
        for sym in kernels::gemm_kernels().iter().map(|k| k.symbol).chain([kernels::QUANT_PER_TOKEN_GROUP, kernels::QUANT_WEIGHT_BLOCKS, kernels::CONVERT_E4M3FN_TO_FNUZ]) {
            assert!(co.windows(sym.len()).any(|w| w == sym.as_bytes()), "{arch}: symbol {sym} missing");
        }
    }
    assert!(kernels::code_object("gfx90a").is_none() && kernels::code_object("sm_90").is_none());
}

/// An llvm-objdump that knows AMDGPU: Debian's llvm-22 (ci/install-rocm-toolchain.sh), ROCm's,
/// or one on PATH. Without one the disassembly check cannot run, which is a failure, not a pass.
fn objdump() -> String {
    let rocm = ["ROCM_PATH", "HIP_PATH"].iter().filter_map(|v| std::env::var(v).ok()).map(|r| format!("{r}/llvm/bin/llvm-objdump"));
    let candidates: Vec<String> = ["llvm-objdump-22".to_string()].into_iter().chain(rocm).chain(["/opt/rocm/llvm/bin/llvm-objdump".into(), "llvm-objdump".into()]).collect();
    candidates
        .iter()
        .find(|t| Command::new(t).arg("--version").output().is_ok_and(|o| o.status.success()))
        .cloned()
        .unwrap_or_else(|| panic!("no llvm-objdump among {candidates:?}: run `bash ci/install-rocm-toolchain.sh` (llvm-22) to disassemble the code objects"))
}

/// Disassembly of `co`, split per function symbol.
fn disassemble(tool: &str, arch: &str, co: &[u8]) -> HashMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{arch}.co"));
    std::fs::write(&path, co).unwrap();
    let out = Command::new(tool).args(["-d", &format!("--mcpu={arch}")]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut funcs: HashMap<String, String> = HashMap::new();
    let mut current = String::new();
    for line in text.lines() {
        // "0000000000001900 <gemm_block_fp8_...>:"
        if let (Some(a), Some(b)) = (line.find('<'), line.rfind(">:")) {
            current = line[a + 1..b].to_string();
            continue;
        }
        funcs.entry(current.clone()).or_default().push_str(line);
        funcs.get_mut(&current).unwrap().push('\n');
    }
    funcs
}

#[test]
fn gemm_kernels_use_the_fp8_mfma_of_their_config() {
    let tool = objdump();
    for arch in kernels::compiled_archs() {
        let funcs = disassemble(&tool, arch, kernels::code_object(arch).unwrap());
        for k in kernels::gemm_kernels() {
            let body = funcs.get(k.symbol).unwrap_or_else(|| panic!("{arch}: {} not in the disassembly", k.symbol));
            let (want, other) = if k.mfma_nonkdim == 32 {
                ("v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x32_fp8_fp8")
            } else {
                ("v_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_32x32x16_fp8_fp8")
            };
            let count = body.matches(want).count();
            // One MFMA per wave tile and K step of a BLOCK_K tile, fully unrolled.
            let per_wave = (k.block_m * k.block_n / (k.mfma_nonkdim * k.mfma_nonkdim * k.num_warps)) * (k.block_k / if k.mfma_nonkdim == 32 { 16 } else { 32 });
            assert!(count as u32 >= per_wave, "{arch} {}: {count} x {want}, expected at least {per_wave}", k.symbol);
            assert!(!body.contains(other), "{arch} {}: uses {other}", k.symbol);
            assert!(!body.contains("scratch_"), "{arch} {}: scratch access", k.symbol);
        }
        // The conversions are the hardware fp8 instructions.
        let quant = &funcs[kernels::QUANT_PER_TOKEN_GROUP];
        assert!(quant.contains("v_cvt_pk_fp8_f32"), "{arch}: quant kernel does not use v_cvt_pk_fp8_f32");
    }
}

fn report_fields(line: &str) -> (String, String, HashMap<String, String>) {
    let mut parts = line.splitn(3, ' ');
    let arch = parts.next().unwrap().to_string();
    let name = parts.next().unwrap().to_string();
    let fields = parts
        .next()
        .unwrap_or("")
        .split("; ")
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (arch, name, fields)
}

#[test]
fn resource_report_shows_no_spills_and_lds_within_64k() {
    let report = kernels::resource_report();
    let lines: Vec<_> = report.lines().filter(|l| !l.starts_with('#')).map(report_fields).collect();
    let gemms: HashMap<&str, GemmKernel> = kernels::gemm_kernels().into_iter().map(|k| (k.symbol, k)).collect();
    for arch in kernels::compiled_archs() {
        for k in gemms.values() {
            let (_, _, f) = lines
                .iter()
                .find(|(a, n, _)| a == arch && n == k.symbol)
                .unwrap_or_else(|| panic!("{arch} {}: not in the resource report", k.symbol));
            let num = |key: &str| -> u64 { f.get(key).unwrap_or_else(|| panic!("{arch} {}: no {key}", k.symbol)).parse().unwrap() };
            assert_eq!(num("SGPRs Spill"), 0, "{arch} {}", k.symbol);
            assert_eq!(num("VGPRs Spill"), 0, "{arch} {}", k.symbol);
            assert_eq!(num("ScratchSize [bytes/lane]"), 0, "{arch} {}", k.symbol);
            let lds = num("LDS Size [bytes/block]");
            assert_eq!(lds, k.lds_bytes as u64, "{arch} {}: LDS differs from one (BM+BN)*BK buffer", k.symbol);
            if arch == "gfx942" {
                assert!(lds <= 65536, "{arch} {}: {lds} bytes of LDS", k.symbol);
            }
            assert!(num("Occupancy [waves/SIMD]") >= 1);
        }
    }
}

#[test]
fn kernel_table_and_lookup() {
    let def = kernels::default_gemm_config();
    assert_eq!(kernels::kernel_tag(&def), "m64n128k128w4s2i32");
    for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
        let k = kernels::find_gemm(&def, out).expect("the default config is always compiled");
        assert_eq!(k.symbol, format!("gemm_block_fp8_m64n128k128w4s2i32_{}", out.name()));
        assert_eq!((k.threads, k.grid_x(65, 129), k.group_m_arg()), (256, 4, 8));
        assert_eq!(k.config(), def);
    }
    // A vLLM MI300X-style entry without num_stages / nonkdim resolves to the MFMA shape that
    // tiles; GROUP_SIZE_M travels with the kernel; an uncompiled config is None.
    let mut cfg = def.clone();
    cfg.num_stages = None;
    cfg.matrix_instr_nonkdim = None;
    cfg.kpack = Some(2);
    cfg.group_m = 32;
    let k = kernels::find_gemm(&cfg, OutDtype::Bf16).unwrap();
    assert_eq!((k.symbol, k.group_m), ("gemm_block_fp8_m64n128k128w4s2i32_bf16", 32));
    cfg.matrix_instr_nonkdim = Some(0); // Triton's "choose": the same rule as no key
    assert_eq!(kernels::kernel_tag(&cfg), "m64n128k128w4s2i32");
    cfg.block_m = 16;
    cfg.block_n = 64;
    cfg.matrix_instr_nonkdim = None;
    assert_eq!(kernels::kernel_tag(&cfg), "m16n64k128w4s2i16");
    cfg.block_k = 512;
    assert!(kernels::find_gemm(&cfg, OutDtype::Bf16).is_none());
    // Launch geometry: 1 x 2 tiles of 64x128 at M=17, N=130 cannot fill 304 CUs, so K splits
    // (16 K tiles at K=2000: 4 splits, each >= 4 tiles), with a workspace of the partials
    // and one counter per tile; at M=4096, N=7168 the tiles fill the CUs: no split.
    let k = kernels::find_gemm(&def, OutDtype::Bf16).unwrap();
    let l = k.launch(17, 130, 2000, 304);
    assert_eq!((l.grid, l.block, l.k_splits, l.workspace_bytes), ((2, 4, 1), 256, 4, 4 * 17 * 130 * 4 + 2 * 4));
    let l = k.launch(4096, 7168, 7168, 304);
    assert_eq!((l.grid, l.k_splits, l.workspace_bytes), ((64 * 56, 1, 1), 1, 0));
    // A config's SPLIT_K fixes the count (clamped to the K tiles).
    let mut fixed = def.clone();
    fixed.extra.insert("SPLIT_K".into(), 3.into());
    let kf = kernels::resolve_gemm(&fixed, OutDtype::Bf16).unwrap();
    assert_eq!((kf.launch(4096, 7168, 7168, 304).k_splits, kf.launch(1, 1, 256, 304).k_splits), (3, 2));
    assert_eq!(kf.config().extra.get("SPLIT_K"), Some(&serde_json::Value::from(3)));
    assert_eq!(kernels::scale_reduce_symbol(OutDtype::F16), "scale_reduce_f16");
}

fn table(path: &str) -> ConfigTable {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every entry of vLLM-format AMD files resolves to the kernel of its own tile and MFMA
/// shape, with its GROUP_SIZE_M: BLOCKFP8_CONFIG_DIR at a vLLM config folder runs those
/// tiles, not a fallback.
#[test]
fn vllm_amd_files_run_their_own_tiles() {
    let mut files: Vec<String> = std::fs::read_dir("tests/data/configs/amd").unwrap().map(|e| e.unwrap().path().display().to_string()).collect();
    files.extend(std::fs::read_dir("tests/data/configs/mi300x").unwrap().map(|e| e.unwrap().path().display().to_string()));
    let mut tiles = std::collections::BTreeSet::new();
    for f in &files {
        for (m, cfg) in &table(f).entries {
            let k = kernels::resolve_gemm(cfg, OutDtype::Bf16).unwrap_or_else(|e| panic!("{f} M={m}: {e}"));
            assert_eq!((k.block_m, k.block_n, k.block_k, k.num_warps), (cfg.block_m, cfg.block_n, cfg.block_k, cfg.num_warps), "{f} M={m}");
            assert_eq!(k.mfma_nonkdim, cfg.matrix_instr_nonkdim.unwrap(), "{f} M={m}");
            assert_eq!(k.group_m, cfg.group_m, "{f} M={m}");
            assert!(k.default_set && k.emulated, "{f} M={m}: {} must be in the default, emulated set", k.symbol);
            tiles.insert((k.block_m, k.block_n));
        }
    }
    assert!(tiles.len() >= 11, "the fixtures name {} distinct tiles: {tiles:?}", tiles.len());
}

/// Entries no kernel may run are refused with a reason naming the key or the missing
/// kernel (the planner then takes the documented fallback), never mapped to another kernel.
#[test]
fn unusable_amd_entries_are_refused_with_a_reason() {
    let t = table("tests/data/configs/amd-bad/N=4096,K=7168,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8,block_shape=[128,128].json");
    let why = |m: usize| kernels::resolve_gemm(&t.entries.iter().find(|e| e.0 == m).unwrap().1, OutDtype::Bf16);
    let e = why(1).unwrap_err();
    assert!(e.contains("matrix_instr_nonkdim 4") && e.contains("16") && e.contains("32"), "{e}");
    let e = why(16).unwrap_err();
    assert!(e.contains("gemm_block_fp8_m256n256k128w4s2i16_bf16") && e.contains("tuning-full"), "{e}");
    let e = why(64).unwrap_err();
    assert!(e.contains("num_stages 3"), "{e}");
    assert_eq!(why(256).unwrap().symbol, "gemm_block_fp8_m64n128k128w4s2i16_bf16");
    // The same refusal through the backend's support check (what the planner asks).
    let shape = blockfp8::gemm::GemmShape { m: 64, n: 4096, k: 7168, block: (128, 128), format: blockfp8::Fp8Format::E4m3fnuz, out_dtype: OutDtype::Bf16 };
    for (m, cfg) in &t.entries {
        let got = blockfp8::backend::hip::kernel_for(&shape, &blockfp8::gemm::GemmPath::Tuned(cfg.clone()));
        assert_eq!(got.is_ok(), *m == 256, "M={m}: {got:?}");
    }
}

/// The static report, re-derived here from the listings the code objects were assembled
/// from: every default-set kernel meets hip/static_report.rs's bounds, and at the four
/// anchor tiles (bf16, gfx942) the main loop's VALU/MFMA is at or below vLLM's Triton
/// kernel and its occupancy at least Triton's.
#[test]
fn static_report_meets_the_bounds_and_the_triton_anchor() {
    use kernels::static_report as sr;
    let mut anchored = 0;
    for &(arch, path) in kernels::listings() {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let stats = sr::parse_listing(&text, "gemm_block_fp8_");
        let lines: Vec<_> = kernels::resource_report().lines().filter(|l| !l.starts_with('#')).map(report_fields).collect();
        for k in kernels::gemm_kernels().into_iter().filter(|k| k.default_set) {
            let s = stats.iter().find(|s| s.name == k.symbol).unwrap_or_else(|| panic!("{arch} {}: not in the listing", k.symbol));
            let (_, _, f) = lines.iter().find(|(a, n, _)| a == arch && n == k.symbol).unwrap();
            let reg_occ: u32 = f["Occupancy [waves/SIMD]"].parse().unwrap();
            let occ = s.occupancy(reg_occ, k.threads, if arch == "gfx950" { 160 * 1024 } else { 64 * 1024 });
            sr::check(s, (k.block_m, k.block_n, k.block_k, k.mfma_nonkdim, k.num_warps), occ, arch == "gfx942").unwrap_or_else(|e| panic!("{arch} {}: {e}", k.symbol));
            assert!(kernels::static_report().contains(&format!("| {arch} | {} |", k.symbol)), "{arch} {}: missing from the report", k.symbol);
            let hot = s.hot_loop().unwrap();
            assert_eq!(hot.byte_loads + s.unaligned_loop().map_or(0, |u| u.byte_loads), 0);
            if let (Some((valu, triton_occ)), "gfx942", OutDtype::Bf16) = (sr::anchor(k.block_m, k.block_n, k.block_k), arch, k.out) {
                assert!(hot.valu_per_mfma() <= valu && occ >= triton_occ, "{}: {:.2} VALU/MFMA at {occ} waves vs Triton {valu} at {triton_occ}", k.symbol, hot.valu_per_mfma());
                anchored += 1;
            }
        }
    }
    if kernels::compiled_archs().contains(&"gfx942") {
        assert!(anchored >= 5, "the anchor tiles 32x32, 16x64, 64x64, 64x128, 128x128 are compiled ({anchored})");
    }
}

/// The listing parser on a hand-written loop: counts per class, loop membership from
/// LLVM's comments, the unaligned-path marker, byte loads.
#[test]
fn static_report_parser_counts_a_written_loop() {
    use kernels::static_report as sr;
    let text = "\t.type\tgemm_block_fp8_x,@function\ngemm_block_fp8_x:\n\ts_load_dword s0, s[0:1], 0x0\n\
.LBB0_2:                                ; =>This Inner Loop Header: Depth=1\n\
\ts_waitcnt vmcnt(0)\n\tds_write_b128 v1, v[2:5]\n\ts_barrier\n\tbuffer_load_dwordx4 v[2:5], v6, s[4:7], 0 offen\n\
\tds_read_b128 v[8:11], v7\n\tv_mfma_f32_16x16x32_fp8_fp8 v[12:15], v[8:9], v[10:11], 0\n\
; %bb.3:                                ;   in Loop: Header=BB0_2 Depth=1\n\
\tv_mfma_f32_32x32x16_fp8_fp8 v[16:31], v[8:9], v[10:11], v[16:31]\n\tv_pk_fma_f32 v[32:33], v[12:13], s[2:3], v[32:33]\n\
\tbuffer_load_ubyte v40, v6, s[4:7], 0 offen\n\ts_add_u32 s4, s4, 0x80\n\ts_cbranch_scc1 .LBB0_2\n\
; %bb.4:\n\tv_add_u32_e32 v1, v2, v3\n\ts_endpgm\n.Lfunc_end0:\n\
\t.amdgpu_metadata\namdhsa.kernels:\n  - .agpr_count:     0\n    .group_segment_fixed_size: 8192\n    .name:           gemm_block_fp8_x\n\
    .private_segment_fixed_size: 0\n    .sgpr_count:     20\n    .vgpr_count:     41\n    .vgpr_spill_count: 0\n";
    let k = &sr::parse_listing(text, "gemm_block_fp8_")[0];
    assert_eq!((k.name.as_str(), k.vgpr, k.sgpr, k.lds_bytes), ("gemm_block_fp8_x", 41, 20, 8192));
    assert_eq!(k.loops.len(), 1);
    let l = &k.loops[0];
    assert_eq!((l.mfma, l.mfma_cycles, l.valu, l.vmem_loads, l.byte_loads, l.ds_reads, l.ds_writes, l.barriers, l.waits, l.salu), (2, 48, 1, 2, 1, 1, 1, 1, 1, 2));
    assert!((l.valu_per_mfma() - 4.0 / 48.0).abs() < 1e-12);
    let e = sr::check(k, (32, 32, 128, 16, 4), 8, true).unwrap_err();
    assert!(e.contains("sub-dword") && e.contains("MFMAs per trip"), "{e}");
    // 8 KiB of LDS, 4-wave groups: 8 groups per CU = 8 waves per SIMD; registers may limit it.
    assert_eq!((k.occupancy(8, 256, 65536), k.occupancy(5, 256, 65536)), (8, 5));
}
