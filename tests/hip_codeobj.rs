//! Static checks of the embedded AMD code objects: they are AMDGPU ELF files, their GEMM
//! kernels use the fp8 MFMA instruction their config names (disassembly), and the
//! compiler's resource report shows no spills, no scratch and LDS within 64 KiB on gfx942.
#![cfg(feature = "rocm")]

use std::collections::HashMap;
use std::process::Command;

use blockfp8::backend::hip::kernels::{self, GemmKernel};
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
            assert_eq!(lds, k.lds_bytes as u64, "{arch} {}: LDS differs from stages*(BM+BN)*BK", k.symbol);
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
    assert_eq!(kernels::kernel_tag(&def), "m64n128k128g8w4s2i32");
    for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
        let k = kernels::find_gemm(&def, out).expect("the default config is always compiled");
        assert_eq!(k.symbol, format!("gemm_block_fp8_m64n128k128g8w4s2i32_{}", out.name()));
        assert_eq!((k.threads, k.grid_x(65, 129)), (256, 4));
        assert_eq!(k.config(), def);
    }
    // A vLLM MI300X-style entry without num_stages / nonkdim resolves to s2 and the MFMA
    // shape that tiles; an uncompiled config is None, not another kernel.
    let mut cfg = def.clone();
    cfg.num_stages = None;
    cfg.matrix_instr_nonkdim = None;
    cfg.kpack = Some(2);
    assert_eq!(kernels::find_gemm(&cfg, OutDtype::Bf16).unwrap().symbol, "gemm_block_fp8_m64n128k128g8w4s2i32_bf16");
    cfg.block_m = 16;
    cfg.block_n = 64;
    cfg.group_m = 1;
    assert_eq!(kernels::kernel_tag(&cfg), "m16n64k128g1w4s2i16");
    cfg.block_k = 256;
    assert!(kernels::find_gemm(&cfg, OutDtype::Bf16).is_none());
    assert_eq!(kernels::scale_reduce_symbol(OutDtype::F16), "scale_reduce_f16");
}
