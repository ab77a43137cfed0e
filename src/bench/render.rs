//! Text renderings of a [`BenchReport`]: markdown tables, JSON, CSV.

use std::collections::BTreeMap;

use super::{BenchReport, Implementation, ShapeResult};
use crate::error::{Error, Result};

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// About three significant digits: CPU rows are tiny in TFLOPS, GPU rows are large.
fn num(x: f64) -> String {
    let a = x.abs();
    let digits = if a >= 100.0 { 0 } else if a >= 10.0 { 1 } else if a >= 1.0 { 2 } else if a >= 0.1 { 3 } else if a == 0.0 { 0 } else { (2.0 - a.log10().floor()) as usize };
    format!("{x:.digits$}")
}

fn num_cell(v: Option<f64>) -> String {
    v.map_or("-".into(), num)
}

fn speedup_cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}x"))
}

/// Worst calc_diff of the block-scaled fp8 paths (the bf16 baseline, with its own input
/// rounding, has its own column so that it cannot mask an fp8 path's error).
fn worst_fp8_diff(s: &ShapeResult) -> Option<f64> {
    s.measurements.iter().filter(|m| m.implementation != Implementation::Bf16Vendor).filter_map(|m| m.calc_diff).reduce(f64::max)
}

fn diff_cell(d: Option<f64>, sampled: bool) -> String {
    d.map_or("-".to_string(), |x| format!("{x:.1e}{}", if sampled { " (sampled)" } else { "" }))
}

/// Arithmetic mean of the defined values (`None` when there are none).
fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One markdown table per (N, K) in first-seen order (rows: M), then the averages. The bf16
/// baseline's columns appear only when some shape measured it.
pub fn render_tables(r: &BenchReport) -> String {
    let with_bf16 = r.shapes.iter().any(|s| s.get(Implementation::Bf16Vendor).is_some());
    let mut out = format!(
        "Backend {} on {}, output {}, {} activation scales; median of {} repeats per path in {} interleaved rounds, {} warm-up runs per round.\n\n",
        r.backend, r.device, r.out_dtype, r.scale_layout, r.repeats, r.rounds, r.warmup
    );
    if r.stopped_early {
        out += "Interrupted: only the shapes below were measured.\n\n";
    }
    let mut groups: Vec<((usize, usize), Vec<&ShapeResult>)> = Vec::new();
    for s in &r.shapes {
        match groups.iter_mut().find(|(nk, _)| *nk == (s.n, s.k)) {
            Some((_, v)) => v.push(s),
            None => groups.push(((s.n, s.k), vec![s])),
        }
    }
    for ((n, k), rows) in &groups {
        out += &format!("### N={n}, K={k}\n\n");
        out += "| M | N | K | tuned us | tuned TFLOPS | tuned GB/s | default us | default TFLOPS | vendor us | vendor TFLOPS | speedup vs default | speedup vs vendor | calc_diff |";
        out += if with_bf16 { " bf16 vendor us | bf16 vendor TFLOPS | speedup vs bf16 | bf16 calc_diff |\n" } else { "\n" };
        out += "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";
        out += if with_bf16 { "--:|--:|--:|--:|\n" } else { "\n" };
        for s in rows {
            let t = s.get(Implementation::Tuned);
            let d = s.get(Implementation::KernelDefault);
            let v = s.get(Implementation::Vendor);
            let diff = diff_cell(worst_fp8_diff(s), s.sampled_check);
            out += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.m,
                s.n,
                s.k,
                cell(t.map(|x| x.time_us), 1),
                num_cell(t.map(|x| x.tflops)),
                num_cell(t.map(|x| x.gbps)),
                cell(d.map(|x| x.time_us), 1),
                num_cell(d.map(|x| x.tflops)),
                cell(v.map(|x| x.time_us), 1),
                num_cell(v.map(|x| x.tflops)),
                speedup_cell(s.speedup(Implementation::Tuned, Implementation::KernelDefault)),
                speedup_cell(s.speedup(Implementation::Tuned, Implementation::Vendor)),
                diff
            );
            if with_bf16 {
                let b = s.get(Implementation::Bf16Vendor);
                out += &format!(
                    " {} | {} | {} | {} |",
                    cell(b.map(|x| x.time_us), 1),
                    num_cell(b.map(|x| x.tflops)),
                    speedup_cell(s.speedup(Implementation::Tuned, Implementation::Bf16Vendor)),
                    diff_cell(b.and_then(|x| x.calc_diff), s.sampled_check)
                );
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out += "### Summary\n\n| implementation | shapes | avg TFLOPS | avg GB/s | worst calc_diff |\n|---|--:|--:|--:|--:|\n";
    for which in Implementation::ALL {
        let ms: Vec<_> = r.shapes.iter().filter_map(|s| s.get(which)).collect();
        if ms.is_empty() {
            continue;
        }
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            which.label(),
            ms.len(),
            num_cell(mean(ms.iter().map(|m| Some(m.tflops)))),
            num_cell(mean(ms.iter().map(|m| Some(m.gbps)))),
            ms.iter().filter_map(|m| m.calc_diff).reduce(f64::max).map_or("-".into(), |x| format!("{x:.1e}"))
        );
    }
    let vs_default = mean(r.shapes.iter().map(|s| s.speedup(Implementation::Tuned, Implementation::KernelDefault)));
    let vs_vendor = mean(r.shapes.iter().map(|s| s.speedup(Implementation::Tuned, Implementation::Vendor)));
    out += &format!("\nAverage speedup of the tuned path: {} over the kernel default, {} over the vendor path", speedup_cell(vs_default), speedup_cell(vs_vendor));
    if with_bf16 {
        let vs_bf16 = mean(r.shapes.iter().map(|s| s.speedup(Implementation::Tuned, Implementation::Bf16Vendor)));
        out += &format!(", {} over the bf16 vendor GEMM of the dequantized inputs", speedup_cell(vs_bf16));
    }
    out += ".\n";
    let mut notes: BTreeMap<String, usize> = BTreeMap::new();
    for s in &r.shapes {
        for n in &s.notes {
            *notes.entry(n.clone()).or_default() += 1;
        }
    }
    if !notes.is_empty() {
        out += "\nNot measured:\n";
        for (n, count) in notes {
            out += &format!("- {n} ({count} shape{})\n", if count == 1 { "" } else { "s" });
        }
    }
    out
}

/// The whole report as pretty JSON.
pub fn render_json(r: &BenchReport) -> Result<String> {
    serde_json::to_string_pretty(r).map_err(|e| Error::invalid("bench", format!("serializing the report: {e}")))
}

/// One CSV row per (shape, implementation).
pub fn render_csv(r: &BenchReport) -> String {
    let mut out = String::from("m,n,k,implementation,config,time_us,tflops,gbps,calc_diff,speedup_vs_kernel_default,speedup_vs_vendor\n");
    for s in &r.shapes {
        for m in &s.measurements {
            let vs = |base: Implementation| s.get(base).map(|b| b.time_us / m.time_us).map_or(String::new(), |x| format!("{x:.4}"));
            out += &format!(
                "{},{},{},{},{},{:.3},{:.4},{:.2},{},{},{}\n",
                s.m,
                s.n,
                s.k,
                m.implementation.label().replace(' ', "_"),
                m.config,
                m.time_us,
                m.tflops,
                m.gbps,
                m.calc_diff.map_or(String::new(), |d| format!("{d:.3e}")),
                vs(Implementation::KernelDefault),
                vs(Implementation::Vendor)
            );
        }
    }
    out
}

/// One line per finished shape, for progress output while a long run goes on:
/// `[3/24] M=64 N=4096 K=7168: tuned 12.3 us, kernel default 13.0 us, vendor 14.1 us, calc_diff 1.2e-6`.
pub fn render_progress_line(index: usize, total: usize, s: &ShapeResult) -> String {
    let mut line = format!("[{}/{total}] M={} N={} K={}:", index + 1, s.m, s.n, s.k);
    let times: Vec<String> = Implementation::ALL.iter().filter_map(|&w| s.get(w).map(|m| format!("{} {:.1} us", w.label(), m.time_us))).collect();
    line += &if times.is_empty() { " no path measured".to_string() } else { format!(" {}", times.join(", ")) };
    if let Some(d) = worst_fp8_diff(s) {
        line += &format!(", calc_diff {}", diff_cell(Some(d), s.sampled_check));
    }
    line
}
