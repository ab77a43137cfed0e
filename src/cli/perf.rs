//! `blockfp8 bench` and `blockfp8 tune` (wired to the library's bench and tune modules).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use blockfp8::backend::{Launches, TimingOptions};
use blockfp8::bench::{self, BenchOptions, BenchShape, Implementation};
use blockfp8::config::Library;
use blockfp8::tune::{self, OnConflict, Shard, ShapeSpec, TuneOptions};
use blockfp8::{BackendKind, OutDtype, Result, ScaleLayout};

fn parse_layout(s: &str) -> std::result::Result<ScaleLayout, String> {
    match s {
        "row" | "row-major" => Ok(ScaleLayout::RowMajor),
        "col" | "column" | "column-major" => Ok(ScaleLayout::ColumnMajor),
        _ => Err(format!("{s:?}: expected row-major or column-major")),
    }
}

/// Where the shapes come from (any combination; the union is used).
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("weights").multiple(true).args(["model", "model_config", "shapes"])))]
pub struct ShapeArgs {
    /// Built-in model preset: deepseek-v3.
    #[arg(long)]
    model: Option<String>,
    /// Hugging Face config.json of a block-quantized FP8 checkpoint.
    #[arg(long)]
    model_config: Option<PathBuf>,
    /// Tensor-parallel size for --model / --model-config.
    #[arg(long, default_value_t = 1)]
    tp_size: usize,
    /// Explicit weight shape N,K (repeatable).
    #[arg(long = "shape")]
    shapes: Vec<String>,
}

impl ShapeArgs {
    pub(super) fn spec(&self) -> ShapeSpec {
        ShapeSpec { preset: self.model.clone(), model_config: self.model_config.clone(), tp_size: Some(self.tp_size), shapes: self.shapes.clone() }
    }
    fn given(&self) -> bool {
        self.model.is_some() || self.model_config.is_some() || !self.shapes.is_empty()
    }
}

/// Timing flags shared by `tune` and `bench`.
#[derive(Args, Debug)]
struct TimingArgs {
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    #[arg(long, default_value_t = 15)]
    repeats: usize,
    /// GPU timing: graph (replay one captured pass, as the anchors were timed) or eager.
    #[arg(long, default_value = "graph")]
    launches: Launches,
}

impl TimingArgs {
    fn options(&self) -> TimingOptions {
        TimingOptions { warmup: self.warmup, repeats: self.repeats, launches: self.launches, ..TimingOptions::default() }
    }
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    #[command(flatten)]
    shapes: ShapeArgs,
    /// Batch sizes (comma-separated); default: the 18-value grid of vLLM's files.
    #[arg(long, value_delimiter = ',')]
    batch_size: Vec<usize>,
    /// Output folder for the config files and the journal (a file already there keeps its
    /// entries for the batch sizes this run does not tune).
    #[arg(long, default_value = ".")]
    save_path: PathBuf,
    /// This host's part of the work: I/N, 0-based.
    #[arg(long, default_value = "0/1")]
    shard: Shard,
    /// cpu, cuda or rocm; default: the best compiled-in backend.
    #[arg(long)]
    backend: Option<BackendKind>,
    /// Device ordinals, one worker each (comma-separated); default 0.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    devices: Vec<usize>,
    #[command(flatten)]
    timing: TimingArgs,
    /// Start over instead of resuming from the journal.
    #[arg(long)]
    fresh: bool,
    #[arg(long, default_value = "bf16")]
    out_dtype: OutDtype,
    #[arg(long, value_parser = parse_layout, default_value = "row-major")]
    scale_layout: ScaleLayout,
    /// Reject candidates whose calc_diff against the CPU reference exceeds this.
    #[arg(long, default_value_t = 1e-4)]
    max_calc_diff: f64,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Write only kernel configs (no vendor entries with the blockfp8_path key), for files
    /// vLLM itself loads: its Triton launch rejects unknown keys.
    #[arg(long)]
    vllm_compatible: bool,
    /// Warn (once per step) when one step of an item, such as one candidate's check and
    /// timing, runs longer than this many seconds: a hung kernel never returns, and the
    /// warning names it.
    #[arg(long, default_value_t = 60.0, value_parser = parse_seconds, value_name = "SECONDS")]
    stall_warning: f64,
    /// Never run these kernel configs (names as the tuner prints them, e.g.
    /// m128n128k128g8w8s5, or m16n64k128g8w4s8/split1 for one K split of it; comma-separated
    /// or repeated): leave out one that hangs and run again, resuming from the journal.
    #[arg(long, value_delimiter = ',', value_name = "CONFIG")]
    exclude_config: Vec<String>,
    /// Do not also time, at each item's M, the entry a plan runs now ($BLOCKFP8_CONFIG_DIR's
    /// files, then the shipped ones); timed, it stays unless a candidate runs faster.
    #[arg(long)]
    skip_served: bool,
}

fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{s:?} is not a number of seconds: {e}"))?;
    if v.is_finite() && v > 0.0 && v <= 1e6 {
        Ok(v)
    } else {
        Err(format!("{s} seconds: needs a positive number up to 1e6"))
    }
}

pub fn tune(a: TuneArgs) -> Result<ExitCode> {
    let shapes = a.shapes.spec().resolve()?;
    let kind = match a.backend {
        Some(k) => k,
        None => blockfp8::backend::best_available().kind(),
    };
    let workers = tune::open_workers(kind, &a.devices)?;
    let mut o = TuneOptions::new(shapes, a.save_path);
    if !a.batch_size.is_empty() {
        o.batch_sizes = a.batch_size;
    }
    o.shard = a.shard;
    o.timing = a.timing.options();
    o.resume = !a.fresh;
    o.out_dtype = a.out_dtype;
    o.scale_layout = a.scale_layout;
    o.max_calc_diff = a.max_calc_diff;
    o.progress = !a.no_progress;
    o.blockfp8_keys = !a.vllm_compatible;
    o.stall_warning = std::time::Duration::from_secs_f64(a.stall_warning);
    o.exclude = a.exclude_config;
    if !a.skip_served {
        o.served = Some(std::sync::Arc::new(blockfp8::config::Library::from_env().expecting_misses()));
    }
    let report = tune::tune(&workers, &o)?;
    print!("{}", tune::render_summary(&report.records));
    if workers.len() > 1 {
        print!("\n{}", tune::render_workers(&report.workers));
    }
    println!(
        "\n{} items ({} resumed from {}), {:.1} s; files:",
        report.records.len(),
        report.resumed,
        report.journal.display(),
        report.wall_seconds
    );
    for f in &report.files {
        println!("  {}", f.display());
    }
    if !report.stalls.is_empty() {
        println!("steps that ran longer than {} s:", a.stall_warning);
        for s in &report.stalls {
            println!("  {s}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    shapes: ShapeArgs,
    /// Batch sizes for --model/--model-config/--shape weights (comma-separated); --mnk
    /// products carry their own M.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64,128,1024,4096", requires = "weights")]
    batch_size: Vec<usize>,
    /// Explicit product M,N,K (repeatable).
    #[arg(long = "mnk")]
    mnk: Vec<BenchShape>,
    #[command(flatten)]
    backend: super::BackendArgs,
    /// Tuned configs from this folder first (then $BLOCKFP8_CONFIG_DIR and the shipped ones).
    #[arg(long)]
    config_dir: Option<PathBuf>,
    #[command(flatten)]
    timing: TimingArgs,
    /// Rounds the repeats are split into, alternating between the paths.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Paths to time (comma-separated): tuned, kernel-default, vendor, bf16-vendor. One path
    /// alone is timed without the others' load on the board's clock and power.
    #[arg(long, value_delimiter = ',', default_value = "tuned,kernel-default,vendor,bf16-vendor")]
    paths: Vec<Implementation>,
    #[arg(long, default_value = "bf16")]
    out_dtype: OutDtype,
    #[arg(long, value_parser = parse_layout, default_value = "row-major")]
    scale_layout: ScaleLayout,
    /// Skip the accuracy check against the CPU reference.
    #[arg(long)]
    no_check: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Print CSV instead of tables.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// Also draw TFLOPS vs M to this SVG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// No progress output on stderr (a line per finished shape).
    #[arg(long)]
    no_progress: bool,
}

pub fn bench(a: BenchArgs, quiet: bool) -> Result<ExitCode> {
    let mut shapes = a.mnk.clone();
    if a.shapes.given() {
        shapes.extend(bench::shapes_for_weights(&a.shapes.spec().resolve()?, &a.batch_size));
    }
    let backend = a.backend.open()?;
    if shapes.is_empty() {
        shapes = bench::default_shapes(backend.kind());
    }
    let mut o = BenchOptions::new(shapes);
    o.timing = a.timing.options();
    o.out_dtype = a.out_dtype;
    o.scale_layout = a.scale_layout;
    o.rounds = a.rounds;
    o.paths = a.paths;
    o.check_accuracy = !a.no_check;
    let lib = match a.config_dir {
        Some(d) => Library::from_env().prepend_dir(d),
        None => Library::from_env(),
    };
    let progress = super::progress::BenchProgress::start(o.shapes.len(), !quiet && !a.no_progress);
    let report = bench::run_with(backend.as_ref(), Some(&lib), &o, &mut |i, s| progress.shape_done(i, s))?;
    drop(progress);
    if a.json {
        println!("{}", bench::render_json(&report)?);
    } else if a.csv {
        print!("{}", bench::render_csv(&report));
    } else {
        print!("{}", bench::render_tables(&report));
    }
    if let Some(p) = a.plot {
        bench::plot_svg(&report, &p)?;
        eprintln!("plot written to {}", p.display());
    }
    if report.stopped_early {
        eprintln!("interrupted: {} of {} shapes measured", report.shapes.len(), o.shapes.len());
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// For `config_cmd.rs`: `blockfp8 config merge --out DIR [--keep-faster] INPUT...`
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Output folder (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// On conflicting entries keep the one whose journal records the smaller time (default: fail).
    #[arg(long)]
    keep_faster: bool,
    /// Shard output folders (or single files).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

pub fn merge(a: MergeArgs) -> Result<ExitCode> {
    let policy = if a.keep_faster { OnConflict::KeepFaster } else { OnConflict::Error };
    let r = tune::merge(&a.inputs, &a.out, policy)?;
    for msg in &r.resolved {
        eprintln!("resolved: {msg}");
    }
    for (file, m) in &r.journal_only {
        eprintln!("warning: {file} M={m} was measured (journal) but is in no input file: rerun that shard, then merge again");
    }
    println!("{} files, {} entries, {} journal records written to {}", r.files.len(), r.entries, r.journal_records, a.out.display());
    Ok(ExitCode::SUCCESS)
}
