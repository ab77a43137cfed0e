//! CPU block-scaled GEMM against the independent float64 reference on ragged shapes,
//! every output dtype, both flavours, both activation-scale layouts; config invariance;
//! bad input.

mod common;

#[allow(unused_imports)]
use blockfp8::HostOps;
use std::sync::Arc;

use blockfp8::backend::cpu::CpuBackend;
use blockfp8::backend::{Backend, TimingOptions};
use blockfp8::config::{dense_file_name, KernelConfig, Library};
use blockfp8::gemm::{calc_diff, GemmPath, GemmProblem, OutDtype, Output};
use blockfp8::{BlockScaledGemm, Error, Fp8Format, ScaleLayout};
use common::{assert_output_close, calc_diff_bound, random_quantized_problem, random_quantized_problem_with, reference_gemm_f64, QuantizedProblem};
use half::{bf16, f16};

const OUTS: [OutDtype; 3] = [OutDtype::Bf16, OutDtype::F16, OutDtype::F32];
const FORMATS: [Fp8Format; 2] = [Fp8Format::E4m3fn, Fp8Format::E4m3fnuz];
const LAYOUTS: [ScaleLayout; 2] = [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor];

fn empty_library() -> Arc<Library> {
    Arc::new(Library::new(vec![], false, false))
}

/// Runs every output dtype through `BlockScaledGemm::run` and checks each against the f64
/// reference; the f32 result is also checked element-wise, and the 16-bit outputs must be
/// exactly the f32 result rounded.
fn check_against_reference(gemm: &BlockScaledGemm, qp: &QuantizedProblem, what: &str) {
    let reference = reference_gemm_f64(&qp.problem());
    let f32_out = match gemm.run(&qp.problem_with_out(OutDtype::F32)).unwrap() {
        Output::F32(v) => v,
        other => panic!("{what}: f32 requested, got {:?}", other.dtype()),
    };
    for out in OUTS {
        let got = gemm.run(&qp.problem_with_out(out)).unwrap();
        assert_output_close(&got, out, &reference, calc_diff_bound(out), &format!("{what} out={}", out.name()));
        match &got {
            Output::Bf16(v) => assert!(v.iter().zip(&f32_out).all(|(b, &f)| *b == bf16::from_f32(f))),
            Output::F16(v) => assert!(v.iter().zip(&f32_out).all(|(h, &f)| h.to_bits() == f16::from_f32(f).to_bits())),
            Output::F32(v) => assert_eq!(v, &f32_out, "{what}: f32 runs differ"),
        }
    }
    // Element-wise: every f32 value within 1e-5 of the output's largest magnitude.
    let scale = reference.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (i, (&g, &r)) in f32_out.iter().zip(&reference).enumerate() {
        assert!((g as f64 - r).abs() <= 1e-5 * scale, "{what}: C[{}, {}] = {g}, reference {r}", i / qp.shape.n, i % qp.shape.n);
    }
}

#[test]
fn ragged_shapes_every_dtype_flavour_and_layout() {
    let gemm = BlockScaledGemm::new(Arc::new(CpuBackend::new()), empty_library());
    // Covers M {1,3,17,100} x N {576,2112,129} x K {1280,200,7168} without the full product.
    let shapes = [
        (1, 576, 7168),
        (3, 2112, 1280),
        (17, 129, 7168),
        (100, 576, 200),
        (100, 129, 1280),
        (3, 129, 200),
        (17, 2112, 200),
        (1, 2112, 1280),
        (17, 576, 1280),
        (3, 576, 7168),
    ];
    let mut seed = 100;
    for (m, n, k) in shapes {
        for f in FORMATS {
            for layout in LAYOUTS {
                seed += 1;
                let qp = random_quantized_problem(m, n, k, f, layout, seed);
                check_against_reference(&gemm, &qp, &format!("M={m} N={n} K={k} {f} {layout:?}"));
            }
        }
    }
}

#[test]
fn larger_shape_both_flavours() {
    let gemm = BlockScaledGemm::new(Arc::new(CpuBackend::new()), empty_library());
    check_against_reference(&gemm, &random_quantized_problem(100, 2112, 1280, Fp8Format::E4m3fnuz, ScaleLayout::ColumnMajor, 7), "100x2112x1280 fnuz");
    check_against_reference(&gemm, &random_quantized_problem(64, 1024, 7168, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 8), "64x1024x7168 fn");
}

#[test]
fn other_scale_blocks_on_cpu() {
    let gemm = BlockScaledGemm::new(Arc::new(CpuBackend::new()), empty_library());
    for (block, (m, n, k)) in [((64, 100), (5, 300, 450)), ((128, 64), (17, 129, 200)), ((1, 1), (3, 7, 9)), ((256, 512), (9, 600, 1100)), ((128, 128), (2, 33, 1))] {
        for f in FORMATS {
            let qp = random_quantized_problem_with(m, n, k, f, ScaleLayout::ColumnMajor, block, OutDtype::F32, 9);
            check_against_reference(&gemm, &qp, &format!("block {block:?} {m}x{n}x{k} {f}"));
        }
    }
}

/// A problem whose reference is known in closed form: all-ones A and B (fp8 1.0) with
/// per-block scales, so C[m, n] = sum_kb As[m,kb] * Bs[n/128,kb] * len(kb).
#[test]
fn closed_form_product_with_partial_blocks() {
    let (m, n, k) = (5, 130, 300);
    for f in FORMATS {
        let one = f.encode(1.0);
        let a = vec![one; m * k];
        let b = vec![one; n * k];
        let kb = k.div_ceil(128);
        let a_scales: Vec<f32> = (0..m * kb).map(|i| (i + 1) as f32 * 0.5).collect();
        let b_scales: Vec<f32> = (0..2 * kb).map(|i| 1.0 / (i + 2) as f32).collect();
        let p = GemmProblem {
            shape: blockfp8::gemm::GemmShape { m, n, k, block: (128, 128), format: f, out_dtype: OutDtype::F32 },
            a: &a,
            a_scales: blockfp8::ActScales { data: &a_scales, layout: ScaleLayout::RowMajor },
            b: &b,
            b_scales: &b_scales,
        };
        let Output::F32(c) = CpuBackend::new().gemm(&p, &GemmPath::KernelDefault).unwrap() else { panic!("dtype") };
        for row in 0..m {
            for col in 0..n {
                let want: f64 = (0..kb).map(|j| a_scales[row * kb + j] as f64 * b_scales[(col / 128) * kb + j] as f64 * (128.min(k - j * 128)) as f64).sum();
                assert!((c[row * n + col] as f64 - want).abs() <= 1e-6 * want, "{f} C[{row},{col}] = {}, want {want}", c[row * n + col]);
            }
        }
    }
}

#[test]
fn every_cpu_config_gives_the_same_f32_result() {
    let cpu = CpuBackend::new();
    let configs = cpu.candidate_configs();
    assert_eq!(configs.len(), 16);
    assert!(configs.contains(&cpu.default_config()));
    let mut odd = vec![];
    for (bm, bn) in [(1, 1), (5, 33), (1024, 1024), (3, 300)] {
        let mut c = cpu.default_config();
        c.block_m = bm;
        c.block_n = bn;
        odd.push(c);
    }
    for (m, n, k, f) in [(17, 576, 1280, Fp8Format::E4m3fn), (100, 129, 200, Fp8Format::E4m3fnuz), (1, 2112, 7168, Fp8Format::E4m3fn)] {
        let qp = random_quantized_problem(m, n, k, f, ScaleLayout::RowMajor, 5);
        let p = qp.problem_with_out(OutDtype::F32);
        let base = cpu.gemm(&p, &GemmPath::KernelDefault).unwrap();
        for cfg in configs.iter().chain(&odd) {
            let path = GemmPath::Tuned(cfg.clone());
            assert_eq!(cpu.supports(&p.shape, &path), Ok(()));
            assert_eq!(cpu.gemm(&p, &path).unwrap(), base, "{m}x{n}x{k} config {}", cfg.short());
        }
    }
}

#[test]
fn tuned_file_entry_is_used_and_agrees() {
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend::new());
    let (m, n, k) = (3, 576, 1280);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = cpu.default_config();
    cfg.block_m = 8;
    cfg.block_n = 64;
    let name = dense_file_name(n, k, &cpu.device().config_name(), "fp8_w8a8", (128, 128));
    let entry: serde_json::Value = serde_json::json!({ "1": cfg, "64": cpu.default_config() });
    std::fs::write(dir.path().join(name), serde_json::to_string_pretty(&entry).unwrap()).unwrap();
    let gemm = BlockScaledGemm::new(cpu.clone(), Arc::new(Library::new(vec![dir.path().into()], false, false)));
    let qp = random_quantized_problem(m, n, k, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 12);
    assert_eq!(gemm.plan(&qp.shape), GemmPath::Tuned(cfg));
    check_against_reference(&gemm, &qp, "tuned entry");
    // No file: the CPU has no vendor path, so the kernel default runs.
    let plain = BlockScaledGemm::new(cpu, empty_library());
    assert_eq!(plain.plan(&qp.shape), GemmPath::KernelDefault);
}

#[test]
fn supports_and_paths() {
    let cpu = CpuBackend::new();
    let shape = random_quantized_problem(1, 1, 1, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 1).shape;
    let why = cpu.supports(&shape, &GemmPath::Vendor).unwrap_err();
    assert!(why.contains("no vendor BLAS"), "{why}");
    assert_eq!(cpu.supports(&shape, &GemmPath::KernelDefault), Ok(()));
    for (bm, bn) in [(0, 64), (64, 0), (2048, 64), (64, 4096)] {
        let mut c: KernelConfig = cpu.default_config();
        c.block_m = bm;
        c.block_n = bn;
        assert!(cpu.supports(&shape, &GemmPath::Tuned(c.clone())).is_err(), "{bm}x{bn}");
        let qp = random_quantized_problem(2, 3, 4, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 2);
        assert!(matches!(cpu.gemm(&qp.problem(), &GemmPath::Tuned(c)), Err(Error::Unsupported { .. })));
    }
    let qp = random_quantized_problem(2, 3, 4, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 2);
    assert!(matches!(cpu.gemm(&qp.problem(), &GemmPath::Vendor), Err(Error::Unsupported { .. })));
}

#[test]
fn time_gemm_reports_each_repeat() {
    let cpu = CpuBackend::new();
    let qp = random_quantized_problem(17, 576, 1280, Fp8Format::E4m3fnuz, ScaleLayout::ColumnMajor, 3);
    let times = cpu.time_gemm(&qp.problem(), &GemmPath::KernelDefault, &TimingOptions { warmup: 1, repeats: 4, rotate_bytes: 0, ..Default::default() }).unwrap();
    assert_eq!(times.len(), 4);
    assert!(times.iter().all(|&t| t > 0.0 && t < 60.0), "{times:?}");
    let mut bad = qp.clone();
    bad.a.pop();
    assert!(cpu.time_gemm(&bad.problem(), &GemmPath::KernelDefault, &TimingOptions::default()).is_err());
}

#[test]
fn bad_input_gives_typed_errors() {
    let gemm = BlockScaledGemm::new(Arc::new(CpuBackend::new()), empty_library());
    let cpu = CpuBackend::new();
    let good = random_quantized_problem(5, 130, 300, Fp8Format::E4m3fn, ScaleLayout::ColumnMajor, 4);
    assert!(gemm.run(&good.problem()).is_ok());

    let expect_err = |qp: &QuantizedProblem, what: &str, check: &dyn Fn(&Error) -> bool| {
        let e = gemm.run(&qp.problem()).expect_err(what);
        assert!(check(&e), "{what}: {e}");
        let e2 = cpu.gemm(&qp.problem(), &GemmPath::KernelDefault).expect_err(what);
        assert_eq!(e.to_string(), e2.to_string());
        assert!(qp.problem().validate().is_err());
    };
    let is_shape = |e: &Error| matches!(e, Error::Shape { .. });
    let is_nonfinite = |e: &Error| matches!(e, Error::NonFinite { .. });

    let mut qp = good.clone();
    qp.a.pop();
    expect_err(&qp, "short A", &is_shape);
    let mut qp = good.clone();
    qp.b.push(0);
    expect_err(&qp, "long B", &is_shape);
    let mut qp = good.clone();
    qp.a_layout = ScaleLayout::RowMajor; // 5 rows: row-major wants 15 scales, column-major has 24
    expect_err(&qp, "activation scales of the other layout", &is_shape);
    let mut qp = good.clone();
    qp.b_scales.pop();
    expect_err(&qp, "short weight scales", &is_shape);
    let mut qp = good.clone();
    qp.a_scales[3] = f32::NAN;
    expect_err(&qp, "NaN activation scale", &is_nonfinite);
    let mut qp = good.clone();
    qp.b_scales[1] = f32::INFINITY;
    expect_err(&qp, "infinite weight scale", &is_nonfinite);
    let mut qp = good.clone();
    qp.shape.m = 0;
    qp.a.clear();
    qp.a_scales.clear();
    expect_err(&qp, "M = 0", &is_shape);
    let mut qp = good.clone();
    qp.shape.block = (0, 128);
    expect_err(&qp, "zero block", &|e| matches!(e, Error::InvalidArgument { .. }));
}

#[test]
fn reference_and_crate_agree_on_calc_diff_definition() {
    // calc_diff is 0 for identical data and grows with the error: guards the bound checks.
    let qp = random_quantized_problem(3, 129, 200, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 6);
    let r = reference_gemm_f64(&qp.problem());
    assert_eq!(calc_diff(&r, &r), 0.0);
    let perturbed: Vec<f64> = r.iter().enumerate().map(|(i, v)| if i % 10 == 0 { v * 1.01 } else { *v }).collect();
    assert!(calc_diff(&perturbed, &r) > 1e-6);
}

#[test]
fn each_row_is_independent_of_the_batch() {
    // Row r of an M-row product is bit-identical to the 1-row product of row r alone.
    let cpu = CpuBackend::new();
    for layout in LAYOUTS {
        let qp = random_quantized_problem(37, 129, 1280, Fp8Format::E4m3fnuz, layout, 21);
        let Output::F32(full) = cpu.gemm(&qp.problem(), &GemmPath::KernelDefault).unwrap() else { panic!("dtype") };
        let (k, n, kb) = (qp.shape.k, qp.shape.n, qp.shape.k_blocks());
        for r in [0, 5, 36] {
            let mut one = qp.clone();
            one.shape.m = 1;
            one.a = qp.a[r * k..(r + 1) * k].to_vec();
            one.a_layout = ScaleLayout::RowMajor;
            one.a_scales = (0..kb).map(|j| qp.problem().a_scale(r, j)).collect();
            let Output::F32(row) = cpu.gemm(&one.problem(), &GemmPath::KernelDefault).unwrap() else { panic!("dtype") };
            assert_eq!(row, full[r * n..(r + 1) * n], "{layout:?} row {r}");
        }
    }
}
