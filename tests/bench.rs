//! The benchmark on the CPU backend: measured rows, renderings, plot.

use std::path::Path;
use std::sync::Arc;

use blockfp8::backend::cpu::CpuBackend;
use blockfp8::backend::{Backend, BackendKind, TimingOptions};
use blockfp8::bench::{self, BenchOptions, BenchShape, Implementation, Measurement};
use blockfp8::config::Library;
use blockfp8::tune::{self, TuneOptions};

fn quick(shapes: Vec<BenchShape>) -> BenchOptions {
    let mut o = BenchOptions::new(shapes);
    o.timing = TimingOptions { warmup: 1, repeats: 3, rotate_bytes: 0, ..Default::default() };
    o
}

/// Tunes (N=256, K=256) at M in {1, 16} on the CPU into `dir` and returns a library over it.
fn tuned_library(dir: &Path) -> Library {
    let mut o = TuneOptions::new(vec![tune::parse_shape("256,256").unwrap()], dir.to_path_buf());
    o.batch_sizes = vec![1, 16];
    o.progress = false;
    o.timing = TimingOptions { warmup: 1, repeats: 3, rotate_bytes: 0, ..Default::default() };
    tune::tune(&[Arc::new(CpuBackend::new()) as Arc<dyn Backend>], &o).unwrap();
    Library::new(vec![dir.to_path_buf()], false, false)
}

#[test]
fn cpu_bench_measures_renders_and_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tuned_library(&tmp.path().join("configs"));
    let cpu = CpuBackend::new();
    let shapes: Vec<BenchShape> = ["1,256,256", "16,256,256", "8,128,384"].iter().map(|s| s.parse().unwrap()).collect();
    let report = bench::run(&cpu, Some(&lib), &quick(shapes.clone())).unwrap();
    assert_eq!(report.shapes.len(), 3);
    for (s, want) in report.shapes.iter().zip(&shapes) {
        assert_eq!((s.m, s.n, s.k), (want.m, want.n, want.k));
        let d = s.get(Implementation::KernelDefault).expect("kernel default measured");
        let flops = 2.0 * (s.m * s.n * s.k) as f64;
        assert!((d.tflops - flops / (d.time_us * 1e-6) / 1e12).abs() <= 1e-9 * d.tflops.max(1.0));
        let bytes = (s.m * s.k + s.n * s.k + 2 * s.m * s.n) as f64;
        assert!((d.gbps - bytes / (d.time_us * 1e-6) / 1e9).abs() <= 1e-6 * d.gbps.max(1.0));
        for m in &s.measurements {
            assert!(m.time_us > 0.0);
            assert!(m.calc_diff.unwrap() < 1e-4, "{m:?}");
        }
        assert!(!s.sampled_check);
    }
    // Tuned file covers N=256 K=256 only.
    assert!(report.shapes[0].get(Implementation::Tuned).is_some());
    assert!(report.shapes[1].get(Implementation::Tuned).is_some());
    assert!(report.shapes[2].get(Implementation::Tuned).is_none());
    assert!(report.shapes[2].notes.iter().any(|n| n.contains("no config file entry")));
    // The CPU has no bf16 vendor GEMM: no such row anywhere, and every shape says why.
    for s in &report.shapes {
        assert!(s.get(Implementation::Bf16Vendor).is_none(), "{s:?}");
        assert!(s.notes.iter().any(|n| n == "bf16 vendor: no bf16 vendor GEMM on the cpu backend"), "{:?}", s.notes);
    }

    let md = bench::render_tables(&report);
    assert!(md.contains("### N=256, K=256") && md.contains("### N=128, K=384"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| 16 | 256 | 256 |")), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| 8 | 128 | 384 |")), "{md}");
    assert!(md.contains("Average speedup"));
    assert!(!md.contains("bf16 vendor us") && !md.contains("over the bf16 vendor GEMM"), "no bf16 columns without bf16 rows: {md}");
    assert!(md.contains("- bf16 vendor: no bf16 vendor GEMM on the cpu backend (3 shapes)"), "{md}");

    let json: serde_json::Value = serde_json::from_str(&bench::render_json(&report).unwrap()).unwrap();
    assert_eq!(json["shapes"].as_array().unwrap().len(), 3);
    let t0 = json["shapes"][0]["measurements"][0]["time_us"].as_f64().unwrap();
    assert!((t0 - report.shapes[0].measurements[0].time_us).abs() <= 1e-9 * t0);
    for (js, s) in json["shapes"].as_array().unwrap().iter().zip(&report.shapes) {
        let kinds: Vec<&str> = js["measurements"].as_array().unwrap().iter().map(|m| m["implementation"].as_str().unwrap()).collect();
        assert!(!kinds.contains(&"bf16_vendor"), "{kinds:?}");
        assert_eq!(kinds.len(), s.measurements.len());
        assert!(js["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("bf16 vendor: ")));
    }

    let csv = bench::render_csv(&report);
    let lines: Vec<&str> = csv.lines().collect();
    let total: usize = report.shapes.iter().map(|s| s.measurements.len()).sum();
    assert_eq!(lines.len(), 1 + total);
    assert_eq!(lines[0], "m,n,k,implementation,config,time_us,tflops,gbps,calc_diff,speedup_vs_kernel_default,speedup_vs_vendor");
    assert!(lines.iter().all(|l| l.split(',').count() == 11 && !l.contains("bf16")), "{csv}");
    let first: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(&first[..4], &["1", "256", "256", "tuned"]);
    let t: f64 = first[5].parse().unwrap();
    assert!((t - report.shapes[0].measurements[0].time_us).abs() < 1e-3);

    let svg = tmp.path().join("plot.svg");
    bench::plot_svg(&report, &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.trim_start().starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains("N=256 K=256 tuned") && text.contains("N=128 K=384 kernel default"));
    assert!(text.contains("<polyline") || text.contains("<path"));
}

/// `paths` limits what is timed: a path not asked for is neither measured nor noted, the
/// report names the paths asked for, and an empty list is refused before any work.
#[test]
fn bench_times_only_the_paths_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tuned_library(&tmp.path().join("configs"));
    let cpu = CpuBackend::new();
    let shapes: Vec<BenchShape> = ["16,256,256", "8,128,384"].iter().map(|s| s.parse().unwrap()).collect();
    let kinds = |s: &bench::ShapeResult| s.measurements.iter().map(|m| m.implementation).collect::<Vec<_>>();

    let mut o = quick(shapes.clone());
    o.paths = vec![Implementation::Tuned];
    let r = bench::run(&cpu, Some(&lib), &o).unwrap();
    assert_eq!(r.paths, vec![Implementation::Tuned]);
    assert_eq!(kinds(&r.shapes[0]), vec![Implementation::Tuned]);
    assert!(r.shapes[0].measurements[0].calc_diff.unwrap() < 1e-4);
    assert!(r.shapes[0].notes.is_empty(), "{:?}", r.shapes[0].notes);
    // N=128 K=384 has no tuned entry: nothing measured, and the note says why.
    assert!(r.shapes[1].measurements.is_empty());
    assert_eq!(r.shapes[1].notes, vec!["tuned: no config file entry for this shape".to_string()]);

    let mut o = quick(shapes);
    o.paths = vec![Implementation::KernelDefault, Implementation::Bf16Vendor];
    let r = bench::run(&cpu, Some(&lib), &o).unwrap();
    for s in &r.shapes {
        assert_eq!(kinds(s), vec![Implementation::KernelDefault]);
        // The bf16 baseline was asked for, so its absence is noted; the tuned path was not.
        assert_eq!(s.notes, vec!["bf16 vendor: no bf16 vendor GEMM on the cpu backend".to_string()]);
    }
    let json: serde_json::Value = serde_json::from_str(&bench::render_json(&r).unwrap()).unwrap();
    assert_eq!(json["paths"], serde_json::json!(["kernel_default", "bf16_vendor"]));

    let mut o = quick(vec!["4,256,256".parse().unwrap()]);
    o.paths.clear();
    let err = bench::run(&cpu, None, &o).unwrap_err().to_string();
    assert!(err.contains("no paths to time"), "{err}");

    for (text, want) in [("tuned", Implementation::Tuned), ("kernel-default", Implementation::KernelDefault), ("vendor", Implementation::Vendor), ("bf16-vendor", Implementation::Bf16Vendor)] {
        assert_eq!(text.parse::<Implementation>().unwrap(), want);
    }
    for bad in ["", "kernel default", "default", "Tuned"] {
        assert!(bad.parse::<Implementation>().is_err(), "{bad:?}");
    }
}

#[test]
fn large_shapes_are_checked_on_a_sample() {
    let cpu = CpuBackend::new();
    let mut o = quick(vec!["3,1024,256".parse().unwrap()]);
    o.full_reference_macs = 1000.0;
    o.timing.repeats = 1;
    let r = bench::run(&cpu, None, &o).unwrap();
    assert!(r.shapes[0].sampled_check);
    assert!(r.shapes[0].measurements.iter().all(|m| m.calc_diff.unwrap() < 1e-4));
    assert!(bench::render_tables(&r).contains("(sampled)"));
}

#[test]
fn default_shapes_and_parsing() {
    let cpu = bench::default_shapes(BackendKind::Cpu);
    assert!(!cpu.is_empty() && cpu.iter().all(|s| s.m * s.n * s.k <= 64 * 512 * 1024), "CPU defaults stay small");
    assert_eq!(bench::default_shapes(BackendKind::Cuda).len(), bench::ANCHOR_SHAPES.len());
    assert_eq!("64,4096,7168".parse::<BenchShape>().unwrap(), BenchShape { m: 64, n: 4096, k: 7168 });
    for bad in ["", "1,2", "0,1,1", "a,b,c"] {
        assert!(bad.parse::<BenchShape>().is_err(), "{bad:?}");
    }
    let w = tune::preset_shapes("deepseek-v3", 8).unwrap();
    assert_eq!(bench::shapes_for_weights(&w, &[1, 64]).len(), 2 * w.len());
    assert!(bench::run(&CpuBackend::new(), None, &quick(vec![])).is_err());
}

/// Renderings of a report that has bf16-baseline rows (no backend here measures one, so one
/// is added to a measured CPU report): its own columns, summary row and average speedup in
/// the tables, its own calc_diff column (the fp8 column keeps the worst fp8 path), a CSV row
/// of the same width, a JSON entry and a plot line.
#[test]
fn bf16_baseline_rows_render_everywhere() {
    let cpu = CpuBackend::new();
    let mut report = bench::run(&cpu, None, &quick(vec!["4,256,256".parse().unwrap(), "8,256,256".parse().unwrap()])).unwrap();
    let fp8_worst = report.shapes[0].measurements.iter().filter_map(|m| m.calc_diff).fold(0.0, f64::max);
    for s in &mut report.shapes {
        let d = s.get(Implementation::KernelDefault).unwrap().clone();
        // Twice the default's time: the default is 2x faster than this row.
        s.measurements.push(Measurement { implementation: Implementation::Bf16Vendor, config: "dequantized-bf16".into(), time_us: 2.0 * d.time_us, tflops: d.tflops / 2.0, gbps: 1.0, calc_diff: Some(0.5) });
    }
    let md = bench::render_tables(&report);
    let header = md.lines().find(|l| l.starts_with("| M | N | K |")).unwrap();
    assert!(header.ends_with("| calc_diff | bf16 vendor us | bf16 vendor TFLOPS | speedup vs bf16 | bf16 calc_diff |"), "{header}");
    let row = md.lines().find(|l| l.starts_with("| 4 | 256 | 256 |")).unwrap();
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 17, "{row}");
    assert_eq!(cells[12], format!("{fp8_worst:.1e}"), "the fp8 calc_diff column ignores the baseline: {row}");
    assert_eq!(cells[13], format!("{:.1}", report.shapes[0].get(Implementation::Bf16Vendor).unwrap().time_us));
    assert_eq!(cells[15], "-", "no tuned row, no speedup over bf16");
    assert_eq!(cells[16], "5.0e-1");
    assert!(md.lines().any(|l| l.starts_with("| bf16 vendor | 2 |") && l.ends_with("| 5.0e-1 |")), "{md}");
    assert!(md.contains("over the bf16 vendor GEMM of the dequantized inputs."), "{md}");

    let csv = bench::render_csv(&report);
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).filter(|c: &Vec<&str>| c[3] == "bf16_vendor").collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for r in &rows {
        assert_eq!(r.len(), 11);
        assert_eq!(r[4], "dequantized-bf16");
        let vs_default: f64 = r[9].parse().unwrap();
        assert!((vs_default - 0.5).abs() < 1e-3, "{r:?}");
    }
    let json: serde_json::Value = serde_json::from_str(&bench::render_json(&report).unwrap()).unwrap();
    assert!(json["shapes"][1]["measurements"].as_array().unwrap().iter().any(|m| m["implementation"] == "bf16_vendor" && m["calc_diff"] == 0.5));

    let tmp = tempfile::tempdir().unwrap();
    let svg = tmp.path().join("bf16.svg");
    bench::plot_svg(&report, &svg).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("N=256 K=256 bf16 vendor"));
}

#[test]
fn gpu_timing_rotates_at_least_four_copies_unless_told_not_to() {
    let t = TimingOptions::default(); // 256 MiB
    // A 132 MB set (N=7168, K=18432 weights) would need 2 copies for 256 MiB: 4 are used.
    assert_eq!(t.copies(132_000_000, 32), 4);
    // Small sets rotate past the cache, up to the cap.
    assert_eq!(t.copies(16 << 20, 32), 16);
    assert_eq!(t.copies(1 << 10, 32), 32);
    assert_eq!(t.copies(0, 16), 16);
    // No rotation asked for: one copy.
    let none = TimingOptions { rotate_bytes: 0, ..Default::default() };
    assert_eq!(none.copies(1 << 10, 32), 1);
}
