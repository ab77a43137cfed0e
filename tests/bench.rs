//! The benchmark on the CPU backend: measured rows, renderings, plot.

use std::path::Path;
use std::sync::Arc;

use blockfp8::backend::cpu::CpuBackend;
use blockfp8::backend::{Backend, BackendKind, TimingOptions};
use blockfp8::bench::{self, BenchOptions, BenchShape, Implementation};
use blockfp8::config::Library;
use blockfp8::tune::{self, TuneOptions};

fn quick(shapes: Vec<BenchShape>) -> BenchOptions {
    let mut o = BenchOptions::new(shapes);
    o.timing = TimingOptions { warmup: 1, repeats: 3, rotate_bytes: 0 };
    o
}

/// Tunes (N=256, K=256) at M in {1, 16} on the CPU into `dir` and returns a library over it.
fn tuned_library(dir: &Path) -> Library {
    let mut o = TuneOptions::new(vec![tune::parse_shape("256,256").unwrap()], dir.to_path_buf());
    o.batch_sizes = vec![1, 16];
    o.progress = false;
    o.timing = TimingOptions { warmup: 1, repeats: 3, rotate_bytes: 0 };
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

    let md = bench::render_tables(&report);
    assert!(md.contains("### N=256, K=256") && md.contains("### N=128, K=384"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| 16 | 256 | 256 |")), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| 8 | 128 | 384 |")), "{md}");
    assert!(md.contains("Average speedup"));

    let json: serde_json::Value = serde_json::from_str(&bench::render_json(&report).unwrap()).unwrap();
    assert_eq!(json["shapes"].as_array().unwrap().len(), 3);
    let t0 = json["shapes"][0]["measurements"][0]["time_us"].as_f64().unwrap();
    assert!((t0 - report.shapes[0].measurements[0].time_us).abs() <= 1e-9 * t0);

    let csv = bench::render_csv(&report);
    let lines: Vec<&str> = csv.lines().collect();
    let total: usize = report.shapes.iter().map(|s| s.measurements.len()).sum();
    assert_eq!(lines.len(), 1 + total);
    assert!(lines[0].starts_with("m,n,k,implementation"));
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
