//! Side-by-side benchmark of the paths one product can take on a backend: the tuned kernel
//! (the config library's entry for the shape), the kernel's default config and the vendor
//! BLAS path, plus, where the backend has one, a dense bf16 vendor GEMM of the dequantized
//! inputs (what the product costs without fp8), or those of them [`BenchOptions::paths`] names;
//! with TFLOPS, GB/s (minimum bytes), speedups and accuracy against the CPU reference; rendered
//! as tables like DeepGEMM's benchmark README, JSON, CSV or an SVG plot.
//!
//! ```no_run
//! # fn main() -> blockfp8::Result<()> {
//! use blockfp8::bench::{self, BenchOptions};
//! let backend = blockfp8::backend::open(blockfp8::BackendKind::Cpu, 0)?;
//! let opts = BenchOptions::new(bench::default_shapes(backend.kind()));
//! let report = bench::run(backend.as_ref(), None, &opts)?;
//! print!("{}", bench::render_tables(&report));
//! # Ok(()) }
//! ```

use std::time::Instant;

use serde::Serialize;

use crate::backend::{Backend, HostOps, BackendKind, TimingOptions};
use crate::config::{Library, PATH_KEY};
use crate::error::{Error, Result};
use crate::gemm::{GemmPath, GemmShape, OutDtype};
use crate::quant::ScaleLayout;
use crate::tune::{median, ProblemData, Reference, WeightShape, DEFAULT_BLOCK, DTYPE};

mod plot;
mod render;

pub use plot::plot_svg;
pub use render::{render_csv, render_json, render_progress_line, render_tables};

/// One product size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BenchShape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl std::str::FromStr for BenchShape {
    type Err = Error;
    /// `M,N,K`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::invalid("bench", format!("shape {s:?}: expected M,N,K with positive integers"));
        let v: Vec<usize> = s.split([',', 'x']).map(|p| p.trim().parse().map_err(|_| bad())).collect::<Result<_>>()?;
        match v.as_slice() {
            [m, n, k] if *m > 0 && *n > 0 && *k > 0 => Ok(BenchShape { m: *m, n: *n, k: *k }),
            _ => Err(bad()),
        }
    }
}

/// The anchor shapes (measured on the H200 for cuBLASLt and vLLM's Triton kernel; the
/// H200 section of BENCHMARKS.md), so GPU results line up with those anchors.
pub const ANCHOR_SHAPES: [(usize, usize, usize); 16] = [
    (8, 4096, 7168),
    (8, 7168, 18432),
    (8, 18432, 7168),
    (64, 4096, 7168),
    (64, 7168, 18432),
    (64, 18432, 7168),
    (64, 24576, 1536),
    (64, 32768, 512),
    (64, 7168, 16384),
    (128, 4096, 7168),
    (128, 7168, 18432),
    (128, 18432, 7168),
    (1024, 4096, 7168),
    (1024, 18432, 7168),
    (2048, 4096, 7168),
    (4096, 4096, 7168),
];

/// Default shapes: the anchors on a GPU backend; on the CPU a few small shapes that finish
/// in seconds (the CPU is the reference, not a contender).
pub fn default_shapes(kind: BackendKind) -> Vec<BenchShape> {
    match kind {
        BackendKind::Cpu => [(1, 256, 512), (16, 256, 512), (64, 256, 512), (1, 512, 1024), (16, 512, 1024), (64, 512, 1024)]
            .iter()
            .map(|&(m, n, k)| BenchShape { m, n, k })
            .collect(),
        _ => ANCHOR_SHAPES.iter().map(|&(m, n, k)| BenchShape { m, n, k }).collect(),
    }
}

/// Every model weight shape at every batch size (for `--model`).
pub fn shapes_for_weights(weights: &[WeightShape], batch_sizes: &[usize]) -> Vec<BenchShape> {
    weights.iter().flat_map(|w| batch_sizes.iter().map(move |&m| BenchShape { m, n: w.n, k: w.k })).collect()
}

#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub shapes: Vec<BenchShape>,
    /// Weight block; the GPU kernels support (128, 128).
    pub block: (usize, usize),
    pub out_dtype: OutDtype,
    pub scale_layout: ScaleLayout,
    /// `timing.repeats` per path (rounded up to a multiple of `rounds`), split over rounds that alternate
    /// between the paths (each round repeats the warm-up).
    pub timing: TimingOptions,
    pub rounds: usize,
    /// Check accuracy against the CPU reference (whole output up to this many multiply-adds,
    /// sampled rows x column blocks above).
    pub check_accuracy: bool,
    pub full_reference_macs: f64,
    pub seed: u64,
    /// The paths to time (default: all of [`Implementation::ALL`]). The tuned path timed alone
    /// runs without the other paths' heat on the board's clock, as a kernel's own benchmark
    /// (DeepGEMM's, for one) times it.
    pub paths: Vec<Implementation>,
}

impl BenchOptions {
    pub fn new(shapes: Vec<BenchShape>) -> Self {
        BenchOptions {
            shapes,
            block: DEFAULT_BLOCK,
            out_dtype: OutDtype::Bf16,
            scale_layout: ScaleLayout::RowMajor,
            timing: TimingOptions::default(),
            rounds: 3,
            check_accuracy: true,
            full_reference_macs: crate::tune::FULL_REFERENCE_MACS,
            seed: 0xBE_0C_F8,
            paths: Implementation::ALL.to_vec(),
        }
    }
}

/// Which path a measurement is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Implementation {
    /// The config library's entry for the shape (absent when there is none).
    Tuned,
    KernelDefault,
    Vendor,
    /// Dense bf16 vendor GEMM of the dequantized inputs (bf16 output); the baseline fp8 is
    /// meant to beat. Its GB/s count the bf16 bytes it moves.
    Bf16Vendor,
}

impl Implementation {
    /// Every path, in the order the bench times and renders them.
    pub const ALL: [Implementation; 4] = [Implementation::Tuned, Implementation::KernelDefault, Implementation::Vendor, Implementation::Bf16Vendor];

    pub fn label(self) -> &'static str {
        match self {
            Implementation::Tuned => "tuned",
            Implementation::KernelDefault => "kernel default",
            Implementation::Vendor => "vendor",
            Implementation::Bf16Vendor => "bf16 vendor",
        }
    }
}

impl std::str::FromStr for Implementation {
    type Err = Error;
    /// `tuned`, `kernel-default`, `vendor` or `bf16-vendor` (the label with a hyphen).
    fn from_str(s: &str) -> Result<Self> {
        Implementation::ALL
            .into_iter()
            .find(|i| i.label().replace(' ', "-") == s.trim())
            .ok_or_else(|| Error::invalid("bench", format!("path {s:?}: expected tuned, kernel-default, vendor or bf16-vendor")))
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub implementation: Implementation,
    /// Config label, `vendor`, or `dequantized-bf16`.
    pub config: String,
    pub time_us: f64,
    pub tflops: f64,
    /// Minimum bytes (A, B, C once) over the time.
    pub gbps: f64,
    /// calc_diff against the CPU reference (`None` when accuracy was not checked).
    pub calc_diff: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ShapeResult {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub measurements: Vec<Measurement>,
    /// Whether calc_diff covered a sample of the output rather than all of it.
    pub sampled_check: bool,
    /// Paths that were not measured, and why.
    pub notes: Vec<String>,
}

impl ShapeResult {
    pub fn get(&self, which: Implementation) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.implementation == which)
    }
    /// Time of `base` over time of `of` (> 1: `of` is faster).
    pub fn speedup(&self, of: Implementation, base: Implementation) -> Option<f64> {
        Some(self.get(base)?.time_us / self.get(of)?.time_us)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub backend: String,
    pub device: String,
    pub out_dtype: String,
    pub scale_layout: String,
    pub warmup: usize,
    pub repeats: usize,
    pub rounds: usize,
    /// The paths asked for ([`BenchOptions::paths`]).
    pub paths: Vec<Implementation>,
    pub shapes: Vec<ShapeResult>,
    /// The run was stopped (Ctrl-C) before every shape was measured; `shapes` holds the finished ones.
    pub stopped_early: bool,
    pub wall_seconds: f64,
}

/// Bytes the bf16 GEMM of the dequantized inputs must move at least: A and B in bf16, C
/// (bf16) written once.
fn bf16_min_bytes(shape: &GemmShape) -> f64 {
    2.0 * (shape.m * shape.k + shape.n * shape.k + shape.m * shape.n) as f64
}

/// What one timed entry runs: a block-scaled path, or the bf16 baseline.
enum Timed {
    Path(GemmPath),
    DequantizedBf16,
}

/// The path the library's tuned entry selects for `shape`, if there is an entry.
fn tuned_path(backend: &dyn Backend, library: Option<&Library>, shape: &GemmShape) -> Option<GemmPath> {
    let table = library?.lookup(&backend.device().config_name(), shape.n, shape.k, DTYPE, shape.block)?;
    let (_, cfg) = table.nearest(shape.m)?;
    if cfg.extra.get(PATH_KEY).and_then(|v| v.as_str()) == Some("vendor") {
        Some(GemmPath::Vendor)
    } else {
        Some(GemmPath::Tuned(cfg.clone()))
    }
}

/// Benchmarks every shape of `opts` on `backend`; the tuned path comes from `library`
/// (`None`: no tuned row). A path the backend cannot run is noted, not an error; a path
/// that fails to run is an error. Every shape's size is checked before the first one runs.
pub fn run(backend: &dyn Backend, library: Option<&Library>, opts: &BenchOptions) -> Result<BenchReport> {
    run_with(backend, library, opts, &mut |_, _| true)
}

/// [`run`], calling `on_shape(index, result)` as each shape finishes (for progress output);
/// when it returns `false` the run stops there and the report holds the finished shapes,
/// with `stopped_early` set.
pub fn run_with(backend: &dyn Backend, library: Option<&Library>, opts: &BenchOptions, on_shape: &mut dyn FnMut(usize, &ShapeResult) -> bool) -> Result<BenchReport> {
    let started = Instant::now();
    if opts.shapes.is_empty() {
        return Err(Error::invalid("bench", "no shapes to benchmark"));
    }
    if opts.paths.is_empty() {
        return Err(Error::invalid("bench", "no paths to time"));
    }
    let asked = |which: Implementation| opts.paths.contains(&which);
    let gemm_shape = |s: &BenchShape| GemmShape { m: s.m, n: s.n, k: s.k, block: opts.block, format: backend.device().fp8, out_dtype: opts.out_dtype };
    // A bad size found after an hour of other shapes (or after allocating its inputs) helps nobody.
    for s in &opts.shapes {
        gemm_shape(s).check_size("bench")?;
    }
    let mut results = Vec::new();
    let mut stopped_early = false;
    for (index, s) in opts.shapes.iter().enumerate() {
        let shape = gemm_shape(s);
        let data = ProblemData::random(shape, opts.scale_layout, opts.seed);
        let p = data.problem();
        p.validate()?;
        let reference = if opts.check_accuracy { Some(Reference::compute(&p, opts.full_reference_macs)?) } else { None };
        let mut res = ShapeResult { m: s.m, n: s.n, k: s.k, measurements: Vec::new(), sampled_check: reference.as_ref().is_some_and(|r| r.sampled), notes: Vec::new() };
        // (Looked up only when asked for: a missing file logs a warning.)
        let tuned = if asked(Implementation::Tuned) { tuned_path(backend, library, &shape) } else { None };
        if tuned.is_none() && asked(Implementation::Tuned) {
            res.notes.push("tuned: no config file entry for this shape".into());
        }
        let paths = [(Implementation::Tuned, tuned), (Implementation::KernelDefault, Some(GemmPath::KernelDefault)), (Implementation::Vendor, Some(GemmPath::Vendor))];
        let rounds = opts.rounds.clamp(1, opts.timing.repeats.max(1));
        let per_round = TimingOptions { repeats: opts.timing.repeats.div_ceil(rounds), ..opts.timing.clone() };
        // Check every runnable path first, then time them in interleaved rounds so that
        // drift (clocks, other tenants) spreads over all paths instead of biasing one.
        let mut runnable: Vec<(Implementation, Timed, Option<f64>)> = Vec::new();
        let mut first_samples: Vec<Vec<f64>> = Vec::new();
        let diff = |out: &crate::gemm::Output, what: String| -> Result<Option<f64>> {
            match &reference {
                Some(r) => Ok(Some(r.diff(out, s.n).map_err(|why| Error::Unsupported { path: what, reason: why })?)),
                None => Ok(None),
            }
        };
        for (which, path) in paths {
            let Some(path) = path.filter(|_| asked(which)) else { continue };
            if let Err(why) = backend.supports(&shape, &path) {
                res.notes.push(format!("{}: {why}", which.label()));
                continue;
            }
            let calc_diff = if reference.is_some() { diff(&backend.gemm(&p, &path)?, path.label())? } else { None };
            runnable.push((which, Timed::Path(path), calc_diff));
            first_samples.push(Vec::new());
        }
        // The bf16 baseline has no separate support query: its first timed round tells
        // (Unsupported becomes a note) and brings the output for calc_diff.
        let bf16 = if asked(Implementation::Bf16Vendor) { Some(backend.time_bf16_vendor_gemm(&p, &per_round)) } else { None };
        match bf16 {
            None => {}
            Some(Ok((times, out))) => {
                let calc_diff = diff(&out, Implementation::Bf16Vendor.label().into())?;
                runnable.push((Implementation::Bf16Vendor, Timed::DequantizedBf16, calc_diff));
                first_samples.push(times);
            }
            Some(Err(Error::Unsupported { reason, .. })) => res.notes.push(format!("{}: {reason}", Implementation::Bf16Vendor.label())),
            Some(Err(e)) => return Err(e),
        }
        let mut samples = first_samples;
        for round in 0..rounds {
            for (i, (_, timed, _)) in runnable.iter().enumerate() {
                match timed {
                    Timed::Path(path) => samples[i].extend(backend.time_gemm(&p, path, &per_round)?),
                    // Its first round ran above.
                    Timed::DequantizedBf16 if round > 0 => samples[i].extend(backend.time_bf16_vendor_gemm(&p, &per_round)?.0),
                    Timed::DequantizedBf16 => {}
                }
            }
        }
        for ((which, timed, calc_diff), samples) in runnable.into_iter().zip(samples) {
            let (config, min_bytes) = match &timed {
                Timed::Path(GemmPath::Tuned(c)) => (c.short(), shape.min_bytes()),
                Timed::Path(GemmPath::Vendor) => ("vendor".into(), shape.min_bytes()),
                Timed::Path(GemmPath::KernelDefault) => (backend.default_config_for(&shape).short(), shape.min_bytes()),
                Timed::DequantizedBf16 => ("dequantized-bf16".into(), bf16_min_bytes(&shape)),
            };
            let t = median(&samples).ok_or_else(|| Error::Unsupported { path: which.label().into(), reason: format!("timing gave no usable samples: {samples:?}") })?;
            res.measurements.push(Measurement { implementation: which, config, time_us: t * 1e6, tflops: shape.flops() / t / 1e12, gbps: min_bytes / t / 1e9, calc_diff });
        }
        log::info!("bench M={} N={} K={}: {} paths measured", s.m, s.n, s.k, res.measurements.len());
        let go_on = on_shape(index, &res);
        results.push(res);
        if !go_on && index + 1 < opts.shapes.len() {
            stopped_early = true;
            break;
        }
    }
    Ok(BenchReport {
        backend: backend.kind().name().into(),
        device: backend.device().name.clone(),
        out_dtype: opts.out_dtype.name().into(),
        scale_layout: crate::tune::layout_name(opts.scale_layout).into(),
        warmup: opts.timing.warmup,
        repeats: opts.timing.repeats,
        rounds: opts.rounds,
        paths: opts.paths.clone(),
        shapes: results,
        stopped_early,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}
