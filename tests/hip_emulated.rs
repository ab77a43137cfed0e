//! The HIP kernels of hip/ executed on the CPU through the emulation layer (hip/emu):
//! the MFMA emulation itself against a plain matrix product and AMD's documented lane
//! positions, then the quantization kernels bit-exact against the CPU reference, the
//! GEMM kernels against a float64 reference, scale_reduce and the fnuz conversion.
//! No AMD GPU is involved: this proves the kernels' logic, not their speed.
#![cfg(feature = "rocm")]

mod common;

use blockfp8::backend::hip::emulator::{self, Arch, ScaleReduceArgs};
use blockfp8::backend::hip::kernels::{self, GemmKernel};
use blockfp8::gemm::{GemmProblem, OutDtype};
use blockfp8::quant::{quantize_per_token_group, quantize_weight_blocks, ScaleLayout, TokenQuantOptions};
use blockfp8::Fp8Format;
use common::*;

/// A random fp8 byte that is not NaN in `format`.
fn finite_byte(rng: &mut Rng, format: Fp8Format) -> u8 {
    loop {
        let b = rng.byte();
        if !decode_fp8_f64(format, b).is_nan() {
            return b;
        }
    }
}

/// Operands of one MFMA packed from A [rows][kdim] and B [kdim][cols] by the documented
/// layout, written here from (row, k) to (lane, byte): lane = row + rows * (k / 8).
fn pack(shape: usize, a: &[Vec<u8>], b: &[Vec<u8>]) -> ([u64; 64], [u64; 64]) {
    let kdim = if shape == 32 { 16 } else { 32 };
    let (mut la, mut lb) = ([0u64; 64], [0u64; 64]);
    for row in 0..shape {
        for k in 0..kdim {
            let lane = row + shape * (k / 8);
            la[lane] |= (a[row][k] as u64) << (8 * (k % 8));
            lb[lane] |= (b[k][row] as u64) << (8 * (k % 8));
        }
    }
    (la, lb)
}

/// (lane, register) holding D[i][j], inverted from the documented accumulator layout.
fn d_position(shape: usize, i: usize, j: usize) -> (usize, usize) {
    if shape == 32 {
        (j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4)
    } else {
        (j + 16 * (i / 4), i % 4)
    }
}

#[test]
#[allow(clippy::needless_range_loop)] // indices mirror the documented A[i][k], B[k][j]
fn mfma_emulation_equals_matrix_product() {
    for arch in Arch::ALL {
        let fmt = arch.fp8();
        for shape in [32usize, 16] {
            let (kdim, acc) = if shape == 32 { (16, 16) } else { (32, 4) };
            let mut rng = Rng::new(shape as u64 * 7 + arch as u64);
            let a: Vec<Vec<u8>> = (0..shape).map(|_| (0..kdim).map(|_| finite_byte(&mut rng, fmt)).collect()).collect();
            let b: Vec<Vec<u8>> = (0..kdim).map(|_| (0..shape).map(|_| finite_byte(&mut rng, fmt)).collect()).collect();
            let c: Vec<f32> = (0..64 * acc).map(|_| rng.range(-100.0, 100.0) as f32).collect();
            let (la, lb) = pack(shape, &a, &b);
            let d = emulator::mfma_lanes(arch, shape as u32, &la, &lb, &c).unwrap();
            for i in 0..shape {
                for j in 0..shape {
                    let (lane, r) = d_position(shape, i, j);
                    let dot: f64 = (0..kdim).map(|k| decode_fp8_f64(fmt, a[i][k]) * decode_fp8_f64(fmt, b[k][j])).sum();
                    let want = c[lane * acc + r] as f64 + dot;
                    let got = d[lane * acc + r] as f64;
                    assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "{arch:?} {shape}x{shape}: D[{i}][{j}] = {got}, want {want}");
                }
            }
        }
    }
}

/// One nonzero A byte and one nonzero B byte at explicit (lane, byte) positions; returns
/// the (lane, register) positions of D that are nonzero.
fn single_product(arch: Arch, shape: u32, a_at: (usize, usize), b_at: (usize, usize)) -> Vec<(usize, usize)> {
    let one = arch.fp8().encode(1.0);
    let (mut la, mut lb) = ([0u64; 64], [0u64; 64]);
    la[a_at.0] |= (one as u64) << (8 * a_at.1);
    lb[b_at.0] |= (one as u64) << (8 * b_at.1);
    let acc = if shape == 32 { 16 } else { 4 };
    let d = emulator::mfma_lanes(arch, shape, &la, &lb, &vec![0.0; 64 * acc]).unwrap();
    (0..64 * acc).filter(|&x| d[x] != 0.0).map(|x| (x / acc, x % acc)).collect()
}

/// The spot checks read from AMD's matrix instruction calculator (`amd_matrix_instruction_calculator`).
#[test]
fn mfma_emulation_matches_documented_lane_positions() {
    for arch in Arch::ALL {
        // 32x32x16: A[5][11] = lane 37 bits 31:24 (byte 3); B[11][7] = lane 39 byte 3;
        // their product lands in D[5][7]: register 1 of lane 39.
        assert_eq!(single_product(arch, 32, (37, 3), (39, 3)), vec![(39, 1)]);
        // D[13][7] is register 5 of lane 39: A[13][0] (lane 13 byte 0) x B[0][7] (lane 7).
        assert_eq!(single_product(arch, 32, (13, 0), (7, 0)), vec![(39, 5)]);
        // D[30][3] is register 14 of lane 35.
        assert_eq!(single_product(arch, 32, (30, 0), (3, 0)), vec![(35, 14)]);
        // 16x16x32: A[5][27] = lane 53 byte 3, times B[27][9] (lane 57 byte 3) -> D[5][9]:
        // register 1 of lane 25.
        assert_eq!(single_product(arch, 16, (53, 3), (57, 3)), vec![(25, 1)]);
        // A[0][4] = lane 0, second VGPR bits 7:0 (byte 4) x B[4][0] -> D[0][0]: lane 0 reg 0.
        assert_eq!(single_product(arch, 16, (0, 4), (0, 4)), vec![(0, 0)]);
        // B[19][9] = lane 41 (byte 3) x A[2][19] (lane 34 byte 3) -> D[2][9]: lane 9 reg 2.
        assert_eq!(single_product(arch, 16, (34, 3), (41, 3)), vec![(9, 2)]);
        // D[13][7] = register 1 of lane 55; D[6][15] = register 2 of lane 31.
        assert_eq!(single_product(arch, 16, (13, 0), (7, 0)), vec![(55, 1)]);
        assert_eq!(single_product(arch, 16, (6, 0), (15, 0)), vec![(31, 2)]);
    }
}

#[test]
fn emulated_conversions_round_like_the_reference_and_overflow_to_nan() {
    for arch in Arch::ALL {
        let fmt = arch.fp8();
        let max = fmt.max_finite();
        let mut rng = Rng::new(99);
        for _ in 0..20000 {
            let x = (rng.normal() * 2f64.powf(rng.range(-12.0, 8.0))) as f32;
            if x.abs() > max {
                continue;
            }
            let got = emulator::cvt_pk_fp8_f32(arch, x, -x, 0xAABB_CCDD, false);
            assert_eq!(got & 0xFF, fmt.encode(x) as u32, "{arch:?} cvt({x})");
            assert_eq!((got >> 8) & 0xFF, fmt.encode(-x) as u32, "{arch:?} cvt({})", -x);
            assert_eq!(got >> 16, 0xAABB, "{arch:?}: word_sel=false keeps the high half of old");
        }
        let hi = emulator::cvt_pk_fp8_f32(arch, 1.0, 2.0, 0x1234_5678, true);
        assert_eq!(hi & 0xFFFF, 0x5678);
        assert_eq!(hi >> 16, fmt.encode(1.0) as u32 | (fmt.encode(2.0) as u32) << 8);
        // Without the kernels' clamp, overflow is NaN (so a missing clamp shows in tests).
        let over = emulator::cvt_pk_fp8_f32(arch, max * 1.2, -max * 4.0, 0, false);
        assert!(decode_fp8_f64(fmt, over as u8).is_nan() && decode_fp8_f64(fmt, (over >> 8) as u8).is_nan(), "{arch:?}: {over:#x}");
        for byte in 0..=255u8 {
            let src = (byte as u32) << 16;
            let got = emulator::cvt_f32_fp8(arch, src, 2) as f64;
            let want = decode_fp8_f64(fmt, byte);
            assert!(got == want || (got.is_nan() && want.is_nan()), "{arch:?} decode {byte:#x}: {got} vs {want}");
        }
    }
}

#[test]
fn token_quant_kernel_is_bit_exact_with_the_cpu_reference() {
    for arch in Arch::ALL {
        for (m, k) in [(1usize, 200usize), (17, 1280), (100, 200), (5, 64)] {
            for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
                for ue8m0 in [false, true] {
                    let x = random_activations(m, k, (m * 31 + k) as u64);
                    let mut opts = TokenQuantOptions::new(arch.fp8());
                    opts.layout = layout;
                    opts.ue8m0 = ue8m0;
                    let want = quantize_per_token_group(&x, m, k, &opts).unwrap();
                    let got = emulator::quantize_tokens(arch, &x, m, k, &opts).unwrap();
                    let what = format!("{arch:?} M={m} K={k} {layout:?} ue8m0={ue8m0}");
                    assert_eq!(got.q, want.q, "{what}: fp8 bytes");
                    assert_eq!(bits(&got.scales), bits(&want.scales), "{what}: scales");
                }
            }
        }
        // An explicit fp8 max (vLLM's 224 is the fnuz default; 448 / 240 = the format max).
        let x = random_activations(9, 300, 5);
        let mut opts = TokenQuantOptions::new(arch.fp8());
        opts.fp8_max = Some(arch.fp8().max_finite());
        let want = quantize_per_token_group(&x, 9, 300, &opts).unwrap();
        let got = emulator::quantize_tokens(arch, &x, 9, 300, &opts).unwrap();
        assert_eq!((got.q, bits(&got.scales)), (want.q, bits(&want.scales)), "{arch:?} fp8_max = format max");
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn weight_quant_kernel_is_bit_exact_with_the_cpu_reference() {
    for arch in Arch::ALL {
        for (n, k) in [(129usize, 200usize), (576, 1280), (1, 1), (130, 127)] {
            let w = random_weights(n, k, (n + 3 * k) as u64);
            let want = quantize_weight_blocks(&w, n, k, (128, 128), arch.fp8()).unwrap();
            let got = emulator::quantize_weight(arch, &w, n, k).unwrap();
            assert_eq!(got.q, want.q, "{arch:?} N={n} K={k}: fp8 bytes");
            assert_eq!(bits(&got.scales), bits(&want.scales), "{arch:?} N={n} K={k}: scales");
        }
    }
}

fn kernel(tag: &str, out: OutDtype) -> GemmKernel {
    let symbol = format!("gemm_block_fp8_{tag}_{}", out.name());
    emulator::emulated_gemm_kernels().into_iter().find(|k| k.symbol == symbol).unwrap_or_else(|| panic!("{symbol} not emulated"))
}

fn check_gemm(arch: Arch, k: &GemmKernel, p: &GemmProblem, misalign: bool) {
    let reference = reference_gemm_f64(p);
    let out = emulator::gemm(arch, k, p, misalign).unwrap_or_else(|e| panic!("{}: {e}", k.symbol));
    let s = p.shape;
    let what = format!("{arch:?} {} M={} N={} K={} {:?} misalign={misalign}", k.symbol, s.m, s.n, s.k, p.a_scales.layout);
    assert_output_close(&out, k.out, &reference, calc_diff_bound(k.out), &what);
}

/// The default config over every ragged shape of the acceptance list, both flavours.
#[test]
fn default_gemm_kernel_matches_reference_on_ragged_shapes() {
    let tag = kernels::kernel_tag(&kernels::default_gemm_config());
    for arch in Arch::ALL {
        let k = kernel(&tag, OutDtype::Bf16);
        for m in [1usize, 17, 100] {
            for n in [576usize, 129] {
                for kk in [1280usize, 200] {
                    let layout = if (m + n) % 2 == 0 { ScaleLayout::RowMajor } else { ScaleLayout::ColumnMajor };
                    let q = random_quantized_problem(m, n, kk, arch.fp8(), layout, (m * n + kk) as u64);
                    check_gemm(arch, &k, &q.problem_with_out(OutDtype::Bf16), false);
                }
            }
        }
    }
}

/// Every other emulated config (32x32 and 16x16 MFMA, BLOCK_K 64, one LDS stage), every
/// output dtype, both scale layouts, the byte-load path.
#[test]
fn every_emulated_gemm_config_matches_reference() {
    let shapes = [(1usize, 576usize, 1280usize), (17, 129, 200), (100, 129, 1280), (33, 257, 136)];
    let mut case = 0usize;
    for arch in Arch::ALL {
        for k in emulator::emulated_gemm_kernels() {
            let (m, n, kk) = shapes[case % shapes.len()];
            let layout = if case % 3 == 0 { ScaleLayout::ColumnMajor } else { ScaleLayout::RowMajor };
            let q = random_quantized_problem(m, n, kk, arch.fp8(), layout, case as u64);
            check_gemm(arch, &k, &q.problem_with_out(k.out), case % 4 == 1);
            case += 1;
        }
    }
}

/// The second-generation paths one by one, both fp8 flavours: K % 128 != 0 with K % 16 == 0
/// (the peeled tail of the aligned path: whole 16-byte chunks past K masked by an
/// out-of-range buffer offset), K % 16 != 0 and unaligned A/B (the unaligned-rows loop:
/// dword loads, v_alignbyte, byte masks), rows past M and N (zero by num_records), N % 4 == 0
/// (4-wide vector epilogue stores) and N % 4 != 0 (element stores), both MFMA shapes,
/// BLOCK_K 128 and 256, every output dtype.
#[test]
fn gemm_second_generation_paths_on_ragged_shapes() {
    let tags = ["m64n128k128w4s2i32", "m128n128k128w4s2i32", "m16n64k256w4s2i16", "m32n32k128w4s2i16", "m64n64k128w4s2i32"];
    // (M, N, K, misalign): K=144, 400 aligned tails (one chunk, 1..3 chunks past K), K=1296
    // a long main loop and a tail, K=200 / 72 ragged K, misaligned K=256.
    let shapes = [(1usize, 72usize, 144usize, false), (37, 200, 400, false), (130, 129, 1296, false), (19, 300, 200, false), (65, 64, 72, false), (33, 136, 256, true)];
    let mut case = 0u64;
    for arch in Arch::ALL {
        for tag in tags {
            for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
                let Some(k) = emulator::emulated_gemm_kernels().into_iter().find(|k| k.symbol == format!("gemm_block_fp8_{tag}_{}", out.name())) else {
                    continue; // bf16-only tile
                };
                for &(m, n, kk, misalign) in &shapes {
                    let layout = if case % 2 == 0 { ScaleLayout::ColumnMajor } else { ScaleLayout::RowMajor };
                    let q = random_quantized_problem(m, n, kk, arch.fp8(), layout, 1000 + case);
                    check_gemm(arch, &k, &q.problem_with_out(out), misalign);
                    case += 1;
                }
            }
        }
    }
    assert!(case >= 2 * 5 * 6, "every tag ran for bf16 at least ({case} cases)");
}

/// GROUP_SIZE_M only reorders tiles: 1, 3, 8 and 64 give bit-identical outputs on a grid
/// of 5 x 3 tiles (a partial last group for 3 and 8).
#[test]
fn gemm_group_m_changes_order_not_result() {
    for arch in Arch::ALL {
        let mut k = kernel("m32n64k128w4s2i16", OutDtype::Bf16);
        let q = random_quantized_problem(150, 150, 300, arch.fp8(), ScaleLayout::RowMajor, 77);
        let p = q.problem_with_out(OutDtype::Bf16);
        k.group_m = 1;
        let first = emulator::gemm(arch, &k, &p, false).unwrap();
        assert_output_close(&first, OutDtype::Bf16, &reference_gemm_f64(&p), calc_diff_bound(OutDtype::Bf16), "group_m 1");
        for g in [3u32, 8, 64] {
            k.group_m = g;
            assert_eq!(emulator::gemm(arch, &k, &p, false).unwrap(), first, "{arch:?} group_m {g}");
        }
    }
}

/// Every entry of the vLLM-format AMD fixture files (every tile vLLM's MI300X / MI325X
/// files name) resolves to its kernel and runs under the emulator on a small ragged problem.
#[test]
fn every_vllm_amd_entry_runs_emulated() {
    let mut ran = 0;
    for dir in ["tests/data/configs/amd", "tests/data/configs/mi300x"] {
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            let table = blockfp8::config::ConfigTable::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for (i, (m_key, cfg)) in table.entries.iter().enumerate() {
                let k = kernels::resolve_gemm(cfg, OutDtype::Bf16).unwrap_or_else(|e| panic!("{} M={m_key}: {e}", path.display()));
                let arch = Arch::ALL[i % 2];
                let (m, n, kk) = (cfg.block_m as usize + 3, 2 * cfg.block_n as usize - 5, 272);
                let q = random_quantized_problem(m, n, kk, arch.fp8(), ScaleLayout::RowMajor, i as u64);
                check_gemm(arch, &k, &q.problem_with_out(OutDtype::Bf16), false);
                ran += 1;
            }
        }
    }
    assert!(ran >= 36, "{ran} entries");
}

/// Split K: the rule splits small-M problems (tiles far fewer than 304 CUs), a config's
/// SPLIT_K fixes the count (uneven ranges: 3 and 7 splits of 16 K tiles; more splits than
/// tiles clamps), the last split of each tile sums the partials and resets its counter
/// (the emulator wrapper fails if a counter is left nonzero), on both fp8 flavours, both
/// MFMA shapes, the skinny decode tile, ragged M/N/K and the unaligned-rows path.
#[test]
fn split_k_matches_reference_and_resets_its_counters() {
    for arch in Arch::ALL {
        for (tag, out) in [("m64n128k128w4s2i32", OutDtype::Bf16), ("m16n64k256w4s2i16", OutDtype::F32), ("m32n32k128w4s2i16", OutDtype::Bf16), ("m64n64k128w4s2i32", OutDtype::Bf16)] {
            let base = kernel(tag, out);
            let (m, n, kk) = (17usize, 130usize, 2000usize);
            assert!(base.k_splits(m, n, kk, emulator::EMULATED_COMPUTE_UNITS) > 1, "{tag}: the rule splits a {m}x{n}x{kk} product");
            for (fixed, misalign) in [(0u32, false), (3, false), (7, true), (64, false)] {
                let mut k = base.clone();
                k.split_k = fixed;
                let q = random_quantized_problem(m, n, kk, arch.fp8(), ScaleLayout::ColumnMajor, 40 + fixed as u64);
                check_gemm(arch, &k, &q.problem_with_out(out), misalign);
            }
        }
        // Large M: no split (the tiles fill the CUs).
        let k = kernel("m32n32k128w4s2i16", OutDtype::Bf16);
        assert_eq!(k.k_splits(4096, 7168, 7168, 304), 1);
        assert_eq!(k.workspace_bytes(4096, 7168, 1), 0);
    }
}

/// The shipped predicted AMD configs: every entry is marked predicted for its device's
/// architecture, resolves to a default-set kernel of its tile, and every distinct launch
/// they name (architecture, kernel, GROUP_SIZE_M) runs under the emulator on a small
/// ragged problem with split K as its rule picks for that problem.
#[test]
fn shipped_amd_configs_run_emulated() {
    use std::collections::BTreeSet;
    let mut launches = BTreeSet::new();
    let mut entries = 0;
    for (name, text) in blockfp8::config::embedded_configs() {
        let Some(key) = blockfp8::config::parse_dense_file_name(name) else { continue };
        let Some(arch) = blockfp8::config::naming::amd_arch_for_config_name(&key.device) else { continue };
        let table = blockfp8::config::ConfigTable::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(table.entries.len(), 18, "{name}");
        for (m, cfg) in &table.entries {
            assert!(cfg.is_predicted() && cfg.predicted_for() == Some(arch), "{name} M={m}: not marked predicted for {arch}");
            let k = kernels::resolve_gemm(cfg, OutDtype::Bf16).unwrap_or_else(|e| panic!("{name} M={m}: {e}"));
            assert!(k.default_set && k.emulated, "{name} M={m}: {}", k.symbol);
            launches.insert((arch, k.symbol, k.group_m));
            entries += 1;
        }
    }
    assert_eq!(entries, 3 * 34 * 18, "MI300X, MI325X, MI355X x 34 shapes (tp 1, 2, 4, 8) x 18 batch sizes");
    for (i, (arch, symbol, group_m)) in launches.iter().enumerate() {
        let mut k = emulator::emulated_gemm_kernels().into_iter().find(|k| k.symbol == *symbol).unwrap();
        k.group_m = *group_m;
        let arch: Arch = arch.parse().unwrap();
        let (m, n, kk) = (k.block_m as usize * 2 + 5, k.block_n as usize * 2 - 3, 1040);
        let q = random_quantized_problem(m, n, kk, arch.fp8(), ScaleLayout::ColumnMajor, 500 + i as u64);
        check_gemm(arch, &k, &q.problem_with_out(OutDtype::Bf16), false);
    }
}

/// `blockfp8 config show` on a shipped predicted entry says it is predicted.
#[test]
fn config_show_says_an_entry_is_predicted() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blockfp8"))
        .args(["config", "show", "--n", "7168", "--k", "18432", "--m", "64", "--device-name", "AMD Instinct MI300X"])
        .env_remove("BLOCKFP8_CONFIG_DIR")
        .output()
        .expect("run blockfp8");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("\"blockfp8_source\":\"predicted\""), "{stdout}");
    assert!(stderr.contains("predicted, not measured") && stderr.contains("gfx942"), "{stderr}");
}

#[test]
fn gemm_rejects_mismatched_flavour_and_dtype() {
    let k = kernel(&kernels::kernel_tag(&kernels::default_gemm_config()), OutDtype::Bf16);
    let q = random_quantized_problem(4, 128, 128, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 1);
    assert!(emulator::gemm(Arch::Gfx942, &k, &q.problem_with_out(OutDtype::Bf16), false).is_err(), "OCP data on gfx942");
    assert!(emulator::gemm(Arch::Gfx950, &k, &q.problem_with_out(OutDtype::F32), false).is_err(), "f32 problem, bf16 kernel");
    assert!(emulator::gemm(Arch::Gfx950, &k, &q.problem_with_out(OutDtype::Bf16), false).is_ok());
    assert!("sm_90".parse::<Arch>().is_err());
}

#[test]
fn scale_reduce_kernel_applies_block_scales() {
    // Partial per-K-block products of rows m0..m0+rows as rocBLAS would produce them.
    for arch in Arch::ALL {
        let (m, n, k) = (37usize, 300usize, 400usize);
        let q = random_quantized_problem(m, n, k, arch.fp8(), ScaleLayout::ColumnMajor, 11);
        let p = q.problem();
        let kb = k.div_ceil(128);
        let (m0, rows) = (8usize, 20usize);
        let batch_stride = rows * n + 5;
        let mut partial = vec![0.0f32; kb * batch_stride];
        for b in 0..kb {
            for i in 0..rows {
                for j in 0..n {
                    let dot: f64 = (b * 128..((b + 1) * 128).min(k))
                        .map(|x| decode_fp8_f64(p.shape.format, p.a[(m0 + i) * k + x]) * decode_fp8_f64(p.shape.format, p.b[j * k + x]))
                        .sum();
                    partial[b * batch_stride + i * n + j] = dot as f32;
                }
            }
        }
        let reference = reference_gemm_f64(&p);
        for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
            let args = ScaleReduceArgs {
                partial: &partial,
                batch_stride,
                a_scales: p.a_scales.data,
                as_stride_m: 1,
                as_stride_kb: p.shape.padded_m(),
                b_scales: p.b_scales,
                m0,
                rows,
                m,
                n,
                kb,
            };
            let c = emulator::scale_reduce(arch, out, &args).unwrap().to_f64();
            assert!(c[..m0 * n].iter().chain(&c[(m0 + rows) * n..]).all(|v| v.is_nan()), "rows outside the chunk are untouched");
            let bound = if out == OutDtype::F32 { 1e-12 } else { 1e-5 };
            assert_calc_diff_below(&c[m0 * n..(m0 + rows) * n], &reference[m0 * n..(m0 + rows) * n], bound, &format!("{arch:?} scale_reduce {out:?}"));
        }
    }
}

#[test]
fn fnuz_conversion_kernel_matches_the_cpu_conversion() {
    let mut rng = Rng::new(3);
    let mut bytes: Vec<u8> = (0..100_003).map(|_| if rng.below(5) == 0 { 0x80 } else { rng.byte() }).collect();
    let mut scales: Vec<f32> = (0..777).map(|_| rng.range(1e-4, 1.0) as f32).collect();
    let (mut want_b, mut want_s) = (bytes.clone(), scales.clone());
    blockfp8::formats::convert_e4m3fn_to_fnuz(&mut want_b, &mut want_s).unwrap();
    // A small grid, so the grid-stride loops take many trips.
    emulator::convert_e4m3fn_to_fnuz(&mut bytes, &mut scales, 3).unwrap();
    assert_eq!(bytes, want_b);
    assert_eq!(bits(&scales), bits(&want_s));
}

#[test]
fn quant_wrappers_reject_bad_input() {
    let x = vec![1.0f32; 4 * 256];
    let mut opts = TokenQuantOptions::new(Fp8Format::E4m3fn);
    opts.fp8_max = Some(500.0); // above e4m3fn's 448
    assert!(emulator::quantize_tokens(Arch::Gfx950, &x, 4, 256, &opts).is_err());
    opts.fp8_max = None;
    assert!(emulator::quantize_tokens(Arch::Gfx942, &x, 4, 256, &opts).is_err(), "OCP options on a fnuz architecture");
    opts.group = 64;
    assert!(emulator::quantize_tokens(Arch::Gfx950, &x, 4, 256, &opts).is_err(), "GPU kernels use groups of 128");
    opts.group = 128;
    assert!(emulator::quantize_tokens(Arch::Gfx950, &x, 4, 255, &opts).is_err(), "length mismatch");
    assert!(emulator::quantize_weight(Arch::Gfx950, &x, 5, 256).is_err(), "length mismatch");
    assert!(emulator::quantize_tokens(Arch::Gfx950, &x, 4, 256, &opts).is_ok());
}

#[test]
fn emulated_execution_model_has_real_barriers_and_wave_ops() {
    use emulator::selftest;
    // 256 work-items per group, 3 groups: each reads its neighbour's LDS write.
    let out = selftest::barrier(256, 3).unwrap();
    for g in 0..3 {
        for t in 0..256 {
            assert_eq!(out[g * 256 + t], ((t + 1) % 256 + 1000 * g) as i32, "group {g} item {t}");
        }
    }
    let mut input = [0.0f32; 128];
    let mut rng = Rng::new(8);
    input.iter_mut().for_each(|v| *v = rng.range(-10.0, 10.0) as f32);
    let (mx, x5) = selftest::shuffles(&input).unwrap();
    for lane in 0..128 {
        let wave = &input[(lane / 64) * 64..(lane / 64) * 64 + 64];
        assert_eq!(mx[lane], wave.iter().cloned().fold(f32::MIN, f32::max), "wave max, lane {lane}");
        assert_eq!(x5[lane], input[lane ^ 5], "shfl_xor 5, lane {lane}");
    }
    let err = selftest::divergent().unwrap_err().to_string();
    assert!(err.contains("deadlock") || err.contains("different wave"), "{err}");
    let data = vec![1.0f32; 10];
    let err = selftest::out_of_range(&data).unwrap_err().to_string();
    assert!(err.contains("out-of-range global load"), "{err}");
}
