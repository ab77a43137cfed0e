//! The tuner: from weight shapes to vLLM-compatible config files, one per (N, K).
//!
//! ```text
//! shapes (preset | model config.json | N,K) x batch sizes  --plan-->  work list (shape, M)
//!   --shard I/N-->  this shard's items  --minus the journal-->  items to do
//!   workers (one per device) pull items from one queue:
//!       random inputs (seeded) -> CPU reference (full, or sampled for large shapes)
//!       default paths (vendor, kernel default) and every candidate config that fits:
//!           run once, check calc_diff against the reference, time (median of repeats)
//!       winner = fastest correct; default path kept unless a config is strictly faster,
//!       and again faster in a fresh timing of both (that timing is what gets reported)
//!       wrong results are rejected and reported; a device error stops the run (resumable)
//!   single writer: journal line (fsync) per item; file per shape (atomic rename) once complete
//! ```
//! Library use (the CLI is a thin layer over this):
//! ```no_run
//! # fn main() -> blockfp8::Result<()> {
//! use blockfp8::tune::{self, TuneOptions};
//! let shapes = tune::preset_shapes("deepseek-v3", 8)?;
//! let backends = vec![blockfp8::backend::open(blockfp8::BackendKind::Cpu, 0)?];
//! let report = tune::tune(&backends, &TuneOptions::new(shapes, "configs-out".into()))?;
//! println!("{}", tune::render_summary(&report.records));
//! # Ok(()) }
//! ```
//! Cluster runs: every host runs the same command with `shard: I/N`, each into its own
//! folder (a folder holding another run's journal is refused, since both runs would
//! rewrite the same files), then [`merge`] joins the folders.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backend::{Backend, TimingOptions};
use crate::config::{dense_file_name, KernelConfig, Library};
use crate::error::{Error, Result};
use crate::gemm::{GemmShape, OutDtype};
use crate::quant::ScaleLayout;

mod item;
mod journal;
mod output;
mod plan;
mod shapes;
mod verify;
mod watchdog;

pub use item::{candidate_configs, candidate_label, median, tune_item, BackendTiming, ItemSettings, Measure, WIDE_TILE_GROUP_M};
pub use journal::{check_record, read_journal, Choice, Journal, RecordKey, Rejected, TuneRecord, JOURNAL_PREFIX};
pub use output::{existing_entries, file_name_of, merge, read_table, table_json, write_atomic, write_files, MergeReport, OnConflict};
pub use plan::{full_work_list, normalize_batch_sizes, shard_work_list, Shard, WorkItem, DEFAULT_BATCH_SIZES};
pub use shapes::{dedupe, parse_shape, preset_shapes, shape_line, shapes_from_model_config, shapes_from_model_json, ShapeSpec, WeightShape, DEFAULT_BLOCK, PRESETS};
pub use verify::{seed_for, ProblemData, Reference, SplitMix, FULL_REFERENCE_MACS};
pub use watchdog::{Activity, Overdue};

/// The dtype tag of every file the tuner writes.
pub const DTYPE: &str = "fp8_w8a8";

pub fn layout_name(layout: ScaleLayout) -> &'static str {
    match layout {
        ScaleLayout::RowMajor => "row_major",
        ScaleLayout::ColumnMajor => "column_major",
    }
}

/// Everything a tuning run needs besides the backends.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    pub shapes: Vec<WeightShape>,
    /// Default: the 18-value grid of the shipped files.
    pub batch_sizes: Vec<usize>,
    /// Folder for the config files and the journal. Files of the tuned shapes are replaced
    /// (with this run's entries only); one folder per shard.
    pub save_path: PathBuf,
    pub shard: Shard,
    /// Warm-up and repeats per candidate (the median is kept).
    pub timing: TimingOptions,
    /// Output dtype the kernels are tuned for (bf16, as in vLLM).
    pub out_dtype: OutDtype,
    /// Activation scale layout the kernels are tuned for.
    pub scale_layout: ScaleLayout,
    /// Candidates whose calc_diff against the CPU reference exceeds this are rejected.
    pub max_calc_diff: f64,
    /// Problems up to this many multiply-adds are checked on the whole output, larger ones
    /// on sampled rows x column blocks.
    pub full_reference_macs: f64,
    /// Skip items already in this shard's journal (a killed run continues); `false` starts over.
    pub resume: bool,
    /// Draw a progress bar on stderr (only when stderr is a terminal).
    pub progress: bool,
    /// Seed of the random inputs (the same on every worker and shard).
    pub seed: u64,
    /// Write blockfp8's own keys: the vendor path (rocBLAS / cuBLASLt) may win an entry,
    /// recorded with `config::PATH_KEY: "vendor"` next to the fastest kernel's fields; a
    /// cluster size (`CLUSTER_KEY`); the K split the backend chose (`SPLIT_K_KEY`); tiles only
    /// blockfp8 runs (`WIDE_BLOCK_NS`). Turn off for files that vLLM itself will load: its
    /// Triton launch passes every key of an entry to the kernel and Triton 3 rejects unknown
    /// keyword arguments. Off, entries replace the kernel default and only kernel configs are
    /// written.
    pub blockfp8_keys: bool,
    /// A step of an item (the reference, one path's check and timing) running longer than
    /// this is reported once (log warning, [`TuneReport::stalls`]): a hung kernel otherwise
    /// stalls the run without a word of which item and candidate it is on.
    pub stall_warning: Duration,
    /// Kernel configs never run, by the short name the tuner prints (`m128n128k128g8w8s5`):
    /// checked against the build's candidates before any work.
    pub exclude: Vec<String>,
    /// The configs a plan reads now (user folders, then the shipped files): the entry it would
    /// run at each item's M is timed too, with its own K split, so that a re-tune does not
    /// write an entry slower than the one it replaces. `None`: not consulted. Build it with
    /// [`Library::expecting_misses`]: a shape without a file is what a tune is for.
    pub served: Option<Arc<Library>>,
}

/// The default [`TuneOptions::stall_warning`]: one candidate's check and timing take seconds.
pub const STALL_WARNING: Duration = Duration::from_secs(60);

impl TuneOptions {
    pub fn new(shapes: Vec<WeightShape>, save_path: PathBuf) -> Self {
        TuneOptions {
            shapes,
            batch_sizes: DEFAULT_BATCH_SIZES.to_vec(),
            save_path,
            shard: Shard::default(),
            timing: TimingOptions::default(),
            out_dtype: OutDtype::Bf16,
            scale_layout: ScaleLayout::RowMajor,
            max_calc_diff: 1e-4,
            full_reference_macs: FULL_REFERENCE_MACS,
            resume: true,
            progress: true,
            seed: 0x005E_EDB1_0CF8,
            blockfp8_keys: true,
            stall_warning: STALL_WARNING,
            exclude: Vec::new(),
            served: None,
        }
    }

    fn item_settings(&self) -> ItemSettings {
        ItemSettings {
            out_dtype: self.out_dtype,
            scale_layout: self.scale_layout,
            timing: self.timing.clone(),
            max_calc_diff: self.max_calc_diff,
            full_reference_macs: self.full_reference_macs,
            seed: self.seed,
            blockfp8_keys: self.blockfp8_keys,
            exclude: self.exclude.clone(),
            served: self.served.clone(),
        }
    }

    /// The journal of this run's shard.
    pub fn journal_path(&self) -> PathBuf {
        self.save_path.join(format!("{JOURNAL_PREFIX}.{}.jsonl", self.shard.tag()))
    }
}

/// What one worker did in this invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerStats {
    pub worker: usize,
    /// The backend's device ordinal.
    pub ordinal: usize,
    pub device: String,
    pub items: usize,
    /// Sum of the items' wall times.
    pub busy_seconds: f64,
}

#[derive(Clone, Debug)]
pub struct TuneReport {
    /// One record per item of this shard, in work-list order (resumed ones included).
    pub records: Vec<TuneRecord>,
    pub files: Vec<PathBuf>,
    /// Items taken from the journal instead of being measured again.
    pub resumed: usize,
    /// Items measured in this invocation.
    pub tuned_now: usize,
    pub journal: PathBuf,
    pub wall_seconds: f64,
    pub workers: Vec<WorkerStats>,
    /// Steps that ran longer than `stall_warning`, as reported ("worker 0: N=.. K=.. M=..:
    /// candidate ..., running for 61 s").
    pub stalls: Vec<String>,
}

/// One backend instance per device ordinal (the tuner's workers). The CPU backend takes
/// one worker: more would only compete for the same cores.
pub fn open_workers(kind: crate::BackendKind, ordinals: &[usize]) -> Result<Vec<Arc<dyn Backend>>> {
    if ordinals.is_empty() {
        return Err(Error::invalid("tune", "no device ordinals given"));
    }
    if kind == crate::BackendKind::Cpu {
        if let Some(o) = ordinals.iter().find(|&&o| o != 0) {
            return Err(Error::BackendUnavailable { backend: "cpu", reason: format!("the CPU backend has one device, 0; got device {o}") });
        }
    }
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for &o in ordinals {
        if !seen.insert(o) {
            return Err(Error::invalid("tune", format!("device {o} listed twice")));
        }
        out.push(crate::backend::open(kind, o)?);
    }
    Ok(out)
}

/// Tunes with the backends' own timers. See [`tune_with`].
pub fn tune(backends: &[Arc<dyn Backend>], opts: &TuneOptions) -> Result<TuneReport> {
    tune_with(backends, opts, &BackendTiming)
}

fn matches_run(r: &TuneRecord, device: &str, opts: &TuneOptions) -> bool {
    r.device == device && r.dtype == DTYPE && r.out_dtype == opts.out_dtype.name() && r.scale_layout == layout_name(opts.scale_layout)
}

fn progress_bar(len: usize, done: usize, enabled: bool) -> indicatif::ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} items, {elapsed} elapsed, ETA {eta} {wide_msg}") {
        bar.set_style(style);
    }
    bar.set_position(done as u64);
    // Items resumed from the journal took no time now; keep them out of the ETA.
    bar.reset_eta();
    bar
}

/// Tunes this shard's items on `backends` (one worker thread per backend; all the same
/// device model; each backend is called only from its worker thread, not the one that
/// opened it), timing with `measure`. Finished items are journaled one by one, so a
/// failed or killed run resumes where it stopped; each shape's file is written as soon as
/// all of its items are done. A worker error stops the run after the items in flight (their
/// results are kept) and is returned.
pub fn tune_with(backends: &[Arc<dyn Backend>], opts: &TuneOptions, measure: &dyn Measure) -> Result<TuneReport> {
    let started = Instant::now();
    let first = backends.first().ok_or_else(|| Error::invalid("tune", "no backend to tune on"))?;
    let device = first.device().config_name();
    for b in backends {
        let (name, fp8) = (b.device().config_name(), b.device().fp8);
        if name != device || fp8 != first.device().fp8 {
            return Err(Error::invalid("tune", format!("workers must be one device model: {device} and {name} differ; tune each model separately")));
        }
    }
    check_excluded(first.as_ref(), &opts.exclude)?;
    let batch_sizes = normalize_batch_sizes(&opts.batch_sizes)?;
    let shapes = dedupe(opts.shapes.clone());
    if shapes.is_empty() {
        return Err(Error::invalid("tune", "no shapes to tune"));
    }
    // Sizes are checked for every shape at the largest batch size before anything is
    // allocated or written: a bad one would otherwise surface after hours of tuning.
    let largest_m = batch_sizes.last().copied().unwrap_or(1);
    for w in &shapes {
        GemmShape { m: largest_m, n: w.n, k: w.k, block: w.block, format: first.device().fp8, out_dtype: opts.out_dtype }.check_size("tune")?;
    }
    let items = shard_work_list(&shapes, &batch_sizes, opts.shard);
    std::fs::create_dir_all(&opts.save_path).map_err(|e| Error::io(format!("creating {}", opts.save_path.display()), e))?;
    let journal_path = opts.journal_path();
    refuse_shared_folder(&opts.save_path, &journal_path)?;
    // Files this run will rewrite must be readable now, not after hours of tuning: their
    // entries for other batch sizes are kept (write_files).
    for w in &shapes {
        existing_entries(&opts.save_path.join(dense_file_name(w.n, w.k, &device, DTYPE, w.block)))?;
    }
    let (mut journal, old) = Journal::open(&journal_path, opts.resume)?;

    let wanted: HashSet<WorkItem> = items.iter().copied().collect();
    let mut done: HashMap<WorkItem, TuneRecord> = HashMap::new();
    for r in old {
        if matches_run(&r, &device, opts) && wanted.contains(&r.item()) {
            done.insert(r.item(), r);
        }
    }
    let resumed = done.len();
    let todo: VecDeque<WorkItem> = items.iter().copied().filter(|i| !done.contains_key(i)).collect();
    if resumed > 0 {
        log::info!("resuming from {}: {resumed} of {} items already done", journal_path.display(), items.len());
    }
    let mut left_per_shape: HashMap<(usize, usize, (usize, usize)), usize> = HashMap::new();
    for i in &todo {
        *left_per_shape.entry((i.n, i.k, i.block)).or_default() += 1;
    }

    let bar = progress_bar(items.len(), resumed, opts.progress);
    let settings = opts.item_settings();
    let queue = Mutex::new(todo);
    let abort = AtomicBool::new(false);
    let activity = Activity::new(backends.len());
    let mut first_error: Option<Error> = None;
    let mut tuned_now: Vec<TuneRecord> = Vec::new();
    let mut stalls: Vec<String> = Vec::new();

    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(WorkItem, Result<TuneRecord>)>();
        let mut handles = Vec::new();
        for (w, backend) in backends.iter().enumerate() {
            let (tx, queue, abort, settings, activity) = (tx.clone(), &queue, &abort, &settings, &activity);
            handles.push(scope.spawn(move || loop {
                if abort.load(Ordering::SeqCst) {
                    break;
                }
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let Some(item) = next else { break };
                let result = tune_item(backend.as_ref(), measure, item, settings, w, activity);
                activity.end(w);
                let failed = result.is_err();
                if tx.send((item, result)).is_err() || failed {
                    break;
                }
            }));
        }
        drop(tx);
        // The only writer of the journal and the files: no result can be lost to a race.
        // Between results, it watches for steps that run too long.
        let poll = opts.stall_warning.min(Duration::from_secs(1)).max(Duration::from_millis(1));
        loop {
            let (item, result) = match rx.recv_timeout(poll) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    for o in activity.overdue(opts.stall_warning, Instant::now()) {
                        let line = format!("worker {}: {}, running for {:.0} s", o.worker, o.what, o.elapsed.as_secs_f64());
                        log::warn!("{line} (if it never returns, a kernel is hung: end the run and run it again with --exclude-config and that config; it resumes from the journal. Please report the config with the shape)");
                        bar.set_message(format!("stalled? {line}"));
                        stalls.push(line);
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            let rec = match result {
                Ok(rec) => rec,
                Err(e) => {
                    abort.store(true, Ordering::SeqCst);
                    log::error!("N={} K={} M={}: {e}", item.n, item.k, item.m);
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            if let Err(e) = journal.append(&rec) {
                abort.store(true, Ordering::SeqCst);
                first_error.get_or_insert(e);
                continue;
            }
            bar.set_message(format!("N={} K={} M={}: {} {:.1}x", rec.n, rec.k, rec.m, rec.choice.label(), rec.speedup()));
            bar.inc(1);
            let key = (item.n, item.k, item.block);
            done.insert(item, rec.clone());
            tuned_now.push(rec);
            let left = left_per_shape.entry(key).or_default();
            *left = left.saturating_sub(1);
            if *left == 0 {
                let shape_records: Vec<TuneRecord> = done.values().filter(|r| (r.n, r.k, r.block) == key).cloned().collect();
                if let Err(e) = write_files(&opts.save_path, &shape_records) {
                    abort.store(true, Ordering::SeqCst);
                    first_error.get_or_insert(e);
                }
            }
        }
        for h in handles {
            if h.join().is_err() {
                first_error.get_or_insert(Error::invalid("tune", "a tuning worker panicked; finished items are in the journal, rerun to resume"));
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = first_error {
        return Err(e);
    }

    let records: Vec<TuneRecord> = items.iter().filter_map(|i| done.get(i).cloned()).collect();
    // Every shape is complete here; rewriting the ones already written is harmless and
    // covers shapes that were complete in the journal before this invocation.
    let files = write_files(&opts.save_path, &records)?;
    let workers = backends
        .iter()
        .enumerate()
        .map(|(w, b)| {
            let mine: Vec<&TuneRecord> = tuned_now.iter().filter(|r| r.worker == w).collect();
            WorkerStats { worker: w, ordinal: b.device().ordinal, device: b.device().name.clone(), items: mine.len(), busy_seconds: mine.iter().map(|r| r.seconds).sum() }
        })
        .collect();
    Ok(TuneReport { records, files, resumed, tuned_now: tuned_now.len(), journal: journal_path, wall_seconds: started.elapsed().as_secs_f64(), workers, stalls })
}

/// Every excluded name must be a config the tuner could run on `backend` (a compiled tile, or
/// a wide one regrouped by `WIDE_TILE_GROUP_M` rows, either at a fixed K split: `/split<S>`), so
/// that a misspelt name does not leave a hung config in the run.
fn check_excluded(backend: &dyn Backend, exclude: &[String]) -> Result<()> {
    if exclude.is_empty() {
        return Ok(());
    }
    let compiled = backend.candidate_configs();
    let known: HashMap<String, KernelConfig> =
        compiled.iter().cloned().chain(compiled.iter().filter_map(item::regrouped_wide_tile)).map(|c| (c.short(), c)).collect();
    // A candidate at one of the backend's other K splits is named `<config>/split<S>`, S a
    // SPLIT_K a config file can hold.
    let is_known = |name: &str| match name.split_once("/split") {
        Some((base, s)) => known.get(base).zip(s.parse::<u32>().ok()).is_some_and(|(c, s)| c.with_split_k(s).validate().is_ok()),
        None => known.contains_key(name),
    };
    match exclude.iter().find(|name| !is_known(name.as_str())) {
        None => Ok(()),
        Some(name) => Err(Error::invalid(
            "tune",
            format!("--exclude-config {name}: not one of this build's kernel configs for {} (names as the tuner prints them, e.g. {})", backend.device().name, compiled.first().map(|c| c.short()).unwrap_or_default()),
        )),
    }
}

/// Two runs (shards, or a run into a merged folder) in one folder would each rewrite the
/// shape files with their own entries only; refuse instead of losing results.
fn refuse_shared_folder(dir: &std::path::Path, ours: &std::path::Path) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(JOURNAL_PREFIX) && name.ends_with(".jsonl") && Some(e.file_name().as_os_str()) != ours.file_name() {
            return Err(Error::invalid(
                "tune",
                format!("{} holds the journal of another run ({name}); give each shard its own save path and join them with merge", dir.display()),
            ));
        }
    }
    Ok(())
}

/// The final table: per (shape, M) the chosen path and config, its time, the default path's
/// time and the speedup over it, accuracy and rejected candidates.
pub fn render_summary(records: &[TuneRecord]) -> String {
    let header = ["N", "K", "M", "choice", "config", "time us", "default", "default us", "speedup", "calc_diff", "cands", "rejected"];
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.n.to_string(),
                r.k.to_string(),
                r.m.to_string(),
                r.choice.label().to_string(),
                r.config.short(),
                format!("{:.2}", r.time_us),
                r.default_path.label().to_string(),
                format!("{:.2}", r.default_time_us),
                format!("{:.2}x", r.speedup()),
                format!("{:.1e}", r.calc_diff),
                r.candidates.to_string(),
                r.rejected.len().to_string(),
            ]
        })
        .collect();
    render_table(&header, &rows)
}

/// Per-worker items and busy time, for multi-device runs.
pub fn render_workers(workers: &[WorkerStats]) -> String {
    let rows: Vec<Vec<String>> =
        workers.iter().map(|w| vec![w.worker.to_string(), w.ordinal.to_string(), w.device.clone(), w.items.to_string(), format!("{:.1}", w.busy_seconds)]).collect();
    render_table(&["worker", "ordinal", "device", "items", "busy s"], &rows)
}

/// A plain text table with right-aligned columns.
pub fn render_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<&str>| cells.iter().zip(&width).map(|(c, w)| format!("{c:>w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string() + "\n";
    let mut out = line(header.to_vec());
    out += &line(width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().iter().map(String::as_str).collect());
    for r in rows {
        out += &line(r.iter().map(String::as_str).collect());
    }
    out
}
