//! Tuning one (shape, M): candidates, correctness check, timing, winner.

use std::sync::Arc;
use std::time::Instant;

use crate::backend::{Backend, HostOps, TimingOptions};
use crate::config::{KernelConfig, Library, PATH_KEY, PREDICTED_FOR_KEY, SOURCE_KEY, SPLIT_K_KEY};
use crate::error::{Error, Result};
use crate::gemm::{GemmPath, GemmProblem, GemmShape, OutDtype};
use crate::quant::ScaleLayout;

use super::journal::{Choice, Rejected, TuneRecord};
use super::plan::WorkItem;
use super::verify::{ProblemData, Reference};
use super::watchdog::Activity;

/// How a path is timed. Production uses [`BackendTiming`] (the backend's own timer: warm-up,
/// device events, inputs rotated past the cache); tests inject deterministic timings.
pub trait Measure: Send + Sync {
    /// Per-repeat seconds of `path` on `problem`.
    fn measure(&self, backend: &dyn Backend, problem: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>>;
}

/// [`Measure`] through `Backend::time_gemm`.
pub struct BackendTiming;

impl Measure for BackendTiming {
    fn measure(&self, backend: &dyn Backend, problem: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        backend.time_gemm(problem, path, opts)
    }
}

/// Median of the samples (mean of the middle two for an even count); `None` when empty or
/// when a sample is not a positive finite time.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() || samples.iter().any(|t| !t.is_finite() || *t <= 0.0) {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { 0.5 * (v[mid - 1] + v[mid]) })
}

/// The settings one item needs (a subset of the tuner's options).
#[derive(Clone, Debug)]
pub struct ItemSettings {
    pub out_dtype: OutDtype,
    pub scale_layout: ScaleLayout,
    pub timing: TimingOptions,
    /// A candidate whose calc_diff against the CPU reference exceeds this is rejected.
    pub max_calc_diff: f64,
    /// Multiply-adds below which the reference covers the whole output.
    pub full_reference_macs: f64,
    pub seed: u64,
    /// Write blockfp8's own keys: let the vendor path win an entry (recorded with
    /// `PATH_KEY: "vendor"`), a cluster size, the backend's pinned K split, a tile only
    /// blockfp8 runs (`WIDE_BLOCK_NS`). Off: only kernel configs vLLM can read are written, as
    /// vLLM's Triton launch rejects unknown keys.
    pub blockfp8_keys: bool,
    /// Kernel configs (short names, as the tuner prints them) never run: a config that hangs
    /// can be left out and the run resumed.
    pub exclude: Vec<String>,
    /// Where the config a plan runs now comes from (`TuneOptions::served`).
    pub served: Option<Arc<Library>>,
}

/// Kernel configs of `backend` that can run `shape`, and the ones filtered out with why.
/// A config's BLOCK_SIZE_K must divide the weight's block_k (each K tile then sees one
/// scale), the file must be able to hold it (`blockfp8_keys` false: files for vLLM, which
/// rejects blockfp8's own keys such as a cluster size), the backend must accept it for this
/// shape (registers, LDS/shared memory), and `exclude` must not name it. In files for this
/// crate, each config is also tried at the backend's other K splits (`split_alternatives`),
/// each a candidate of its own with its SPLIT_K.
pub fn candidate_configs(backend: &dyn Backend, shape: &GemmShape, blockfp8_keys: bool, exclude: &[String]) -> (Vec<KernelConfig>, Vec<Rejected>) {
    let mut keep: Vec<KernelConfig> = Vec::new();
    let mut skipped = Vec::new();
    let mut consider = |cfg: KernelConfig, keep: &mut Vec<KernelConfig>| {
        if keep.contains(&cfg) {
            return;
        }
        match why_not(backend, shape, blockfp8_keys, exclude, &cfg) {
            None => keep.push(cfg),
            Some(reason) => skipped.push(Rejected { config: candidate_label(&cfg), reason }),
        }
    };
    let compiled = backend.candidate_configs();
    let regrouped: Vec<KernelConfig> = compiled.iter().filter_map(|c| wide_tile_regrouped(c, shape)).collect();
    for cfg in compiled.into_iter().chain(regrouped) {
        consider(cfg, &mut keep);
    }
    if blockfp8_keys {
        let splits: Vec<KernelConfig> = keep
            .iter()
            .flat_map(|c| backend.split_alternatives(c, shape).into_iter().map(move |v| c.with_split_k(v)))
            .collect();
        for cfg in splits {
            consider(cfg, &mut keep);
        }
    }
    (keep, skipped)
}

/// Why `cfg` cannot be a candidate for `shape`, if it cannot.
fn why_not(backend: &dyn Backend, shape: &GemmShape, blockfp8_keys: bool, exclude: &[String], cfg: &KernelConfig) -> Option<String> {
    if exclude.contains(&cfg.short()) || exclude.contains(&candidate_label(cfg)) {
        Some("excluded (--exclude-config)".into())
    } else if cfg.block_k == 0 || shape.block.1 % cfg.block_k as usize != 0 {
        Some(format!("BLOCK_SIZE_K {} does not divide the weight block_k {}", cfg.block_k, shape.block.1))
    } else if let Err(why) = cfg.validate() {
        // A kernel the backend can run but a config file cannot name, so the tuner must not
        // pick it.
        Some(format!("a config file cannot hold it: {why}"))
    } else if !blockfp8_keys && cfg.is_blockfp8_only() {
        Some("blockfp8-only: a blockfp8 key or a BLOCK_SIZE_N vLLM cannot run (--vllm-compatible)".into())
    } else {
        backend.supports(shape, &GemmPath::Tuned(cfg.clone())).err()
    }
}

/// A candidate as the tuner names it (logs, stall warnings, rejections, `--exclude-config`):
/// the config's short name, and `/split<S>` when it fixes its K split.
pub fn candidate_label(cfg: &KernelConfig) -> String {
    match cfg.extra.get(SPLIT_K_KEY).and_then(|v| v.as_u64()) {
        Some(s) => format!("{}/split{s}", cfg.short()),
        None => cfg.short(),
    }
}

/// The kernel config a plan reads from `lib` for `shape` now (the entry nearest its M), to be
/// timed as a candidate: `None` where there is no entry or it names the vendor path (timed
/// anyway); `Err` with why where this build cannot run it or the file being written cannot
/// hold it. A prediction's provenance keys are dropped: a measured entry replaces it.
fn served_config(lib: &Library, backend: &dyn Backend, shape: &GemmShape, blockfp8_keys: bool, exclude: &[String]) -> Option<std::result::Result<KernelConfig, Rejected>> {
    let table = lib.lookup(&backend.device().config_name(), shape.n, shape.k, super::DTYPE, shape.block)?;
    let (_, cfg) = table.nearest(shape.m)?;
    if cfg.extra.contains_key(PATH_KEY) {
        return None;
    }
    let mut cfg = cfg.clone();
    cfg.extra.remove(SOURCE_KEY);
    cfg.extra.remove(PREDICTED_FOR_KEY);
    Some(match why_not(backend, shape, blockfp8_keys, exclude, &cfg) {
        None => Ok(cfg),
        Some(reason) => Err(Rejected { config: format!("served {}", candidate_label(&cfg)), reason }),
    })
}

/// A path as the tuner names it.
fn path_label(path: &GemmPath) -> String {
    match path {
        GemmPath::Tuned(c) => format!("tuned {}", candidate_label(c)),
        other => other.label(),
    }
}

/// Wide tiles (at least 128 x 192) are also tried with `WIDE_TILE_GROUP_M` rows of tiles per
/// group where the shape has that many: when the CTAs running at once span 16 rows of tiles
/// rather than 8, they read fewer distinct rows of A and B (16 x 128 + 9 x 256 against
/// 8 x 128 + 17 x 256 for 132 SMs at 128x256). On the H200 that ran 1.4-1.5% faster at
/// N=24576 K=1536 (M = 2048, 4096) and 0.8% slower at 4096x2112x7168 (cuda/EXPERIMENTS.md), so the
/// tuner, not a rule, decides.
pub const WIDE_TILE_GROUP_M: u32 = 16;

/// `cfg` in groups of `WIDE_TILE_GROUP_M` rows when it is a wide tile grouped otherwise (on any
/// shape with that many rows of tiles).
pub(super) fn regrouped_wide_tile(cfg: &KernelConfig) -> Option<KernelConfig> {
    let wide = cfg.block_m >= 128 && cfg.block_n >= 192 && cfg.group_m != WIDE_TILE_GROUP_M;
    wide.then(|| KernelConfig { group_m: WIDE_TILE_GROUP_M, ..cfg.clone() })
}

fn wide_tile_regrouped(cfg: &KernelConfig, shape: &GemmShape) -> Option<KernelConfig> {
    regrouped_wide_tile(cfg).filter(|_| shape.m.div_ceil(cfg.block_m as usize) >= WIDE_TILE_GROUP_M as usize)
}

struct Contender {
    choice: Choice,
    path: GemmPath,
    time: f64,
    diff: f64,
}

/// Why a contender did not get a time.
enum Failure {
    /// Wrong result, unusable timing, or the path refused the problem: reject and go on.
    Rejected(String),
    /// The device itself failed (`Error::Device`): later launches cannot be trusted either,
    /// so the item fails and the run stops (it resumes from the journal).
    Device(Error),
}

fn reject(reason: String) -> Failure {
    Failure::Rejected(reason)
}

fn classify(e: Error, what: &str) -> Failure {
    match e {
        e @ Error::Device { .. } => Failure::Device(e),
        other => Failure::Rejected(format!("{what}: {other}")),
    }
}

/// Runs `path` once to check it, then times it: (median seconds, calc_diff).
fn evaluate(backend: &dyn Backend, measure: &dyn Measure, p: &GemmProblem, reference: &Reference, path: &GemmPath, s: &ItemSettings) -> std::result::Result<(f64, f64), Failure> {
    let out = backend.gemm(p, path).map_err(|e| classify(e, "run failed"))?;
    if out.dtype() != s.out_dtype || out.len() != p.shape.m * p.shape.n {
        return Err(reject(format!("output is {} x {}, expected {} x {}", out.len(), out.dtype().name(), p.shape.m * p.shape.n, s.out_dtype.name())));
    }
    let diff = reference.diff(&out, p.shape.n).map_err(reject)?;
    if diff.is_nan() || diff > s.max_calc_diff {
        return Err(reject(format!("wrong result: calc_diff {diff:.3e} > {:.1e}", s.max_calc_diff)));
    }
    let samples = measure.measure(backend, p, path, &s.timing).map_err(|e| classify(e, "timing failed"))?;
    let t = median(&samples).ok_or_else(|| reject(format!("timing returned no usable samples ({samples:?})")))?;
    Ok((t, diff))
}

/// Tunes one item on one backend. Wrong or failing candidates are rejected and reported;
/// the item fails when no default path runs it correctly, or on a device error. Each step
/// (the reference, each path) is posted to `activity` as worker `worker`'s.
pub fn tune_item(backend: &dyn Backend, measure: &dyn Measure, item: WorkItem, s: &ItemSettings, worker: usize, activity: &Activity) -> Result<TuneRecord> {
    let started = Instant::now();
    let dev = backend.device();
    let shape = GemmShape { m: item.m, n: item.n, k: item.k, block: item.block, format: dev.fp8, out_dtype: s.out_dtype };
    shape.check_size("tune")?;
    let data = ProblemData::random(shape, s.scale_layout, s.seed);
    let p = data.problem();
    let what = format!("N={} K={} M={}", item.n, item.k, item.m);
    activity.begin(worker, format!("{what}: the CPU reference"));
    let reference = Reference::compute(&p, s.full_reference_macs)?;

    let mut rejected = Vec::new();
    // The default paths go first: a tuned config must be strictly faster to replace them.
    let mut contenders: Vec<Contender> = Vec::new();
    let mut default_times: [Option<f64>; 2] = [None, None];
    for (slot, (choice, path)) in [(Choice::Vendor, GemmPath::Vendor), (Choice::KernelDefault, GemmPath::KernelDefault)].into_iter().enumerate() {
        if backend.supports(&shape, &path).is_err() {
            continue;
        }
        activity.begin(worker, format!("{what}: the {} path", choice.label()));
        match evaluate(backend, measure, &p, &reference, &path, s) {
            Ok((time, diff)) => {
                default_times[slot] = Some(time);
                contenders.push(Contender { choice, path, time, diff });
            }
            Err(Failure::Device(e)) => return Err(e),
            Err(Failure::Rejected(reason)) => {
                log::warn!("{what}: {} path rejected: {reason}", choice.label());
                rejected.push(Rejected { config: choice.label().into(), reason });
            }
        }
    }
    let [vendor_time, kernel_default_time] = default_times;
    // The path an entry replaces: without a tuned file the plan takes the vendor path when
    // it can run the shape; files that must not name the vendor path replace the kernel default.
    let vendor_ok = s.blockfp8_keys && backend.supports(&shape, &GemmPath::Vendor).is_ok();
    let (default_path, default_time) = match (vendor_ok, vendor_time, kernel_default_time) {
        (true, Some(v), _) => (Choice::Vendor, v),
        (_, _, Some(d)) => (Choice::KernelDefault, d),
        _ => {
            let why = rejected.iter().map(|r| format!("{}: {}", r.config, r.reason)).collect::<Vec<_>>().join("; ");
            return Err(Error::Unsupported { path: "default paths".into(), reason: format!("{what}: no default path ran correctly ({why})") });
        }
    };

    let (mut configs, mut skipped) = candidate_configs(backend, &shape, s.blockfp8_keys, &s.exclude);
    if let Some(served) = s.served.as_deref().and_then(|lib| served_config(lib, backend, &shape, s.blockfp8_keys, &s.exclude)) {
        match served {
            Ok(cfg) if !configs.contains(&cfg) => {
                log::info!("{what}: the entry a plan runs now, {}, is timed too", candidate_label(&cfg));
                configs.push(cfg);
            }
            Ok(_) => {}
            Err(r) => skipped.push(r),
        }
    }
    for cfg in &configs {
        let path = GemmPath::Tuned(cfg.clone());
        activity.begin(worker, format!("{what}: candidate {}", candidate_label(cfg)));
        match evaluate(backend, measure, &p, &reference, &path, s) {
            Ok((time, diff)) => contenders.push(Contender { choice: Choice::Tuned, path, time, diff }),
            Err(Failure::Device(e)) => return Err(e),
            Err(Failure::Rejected(reason)) => {
                log::warn!("{what}: candidate {} rejected: {reason}", candidate_label(cfg));
                rejected.push(Rejected { config: candidate_label(cfg), reason });
            }
        }
    }

    // Fastest correct contender; on equal times the earlier (default paths first) stays.
    // Files for vLLM can name neither the vendor path nor a kernel default only blockfp8 runs
    // (e.g. CUDA's 128x192 tile at large M).
    let default_cfg = backend.default_config_for(&shape);
    let default_vllm_ok = !default_cfg.is_blockfp8_only();
    let eligible = |c: &Contender| {
        s.blockfp8_keys
            || match c.choice {
                Choice::Vendor => false,
                Choice::KernelDefault => default_vllm_ok,
                Choice::Tuned => true,
            }
    };
    let fastest = |keep: &dyn Fn(&Contender) -> bool| {
        let mut best: Option<usize> = None;
        for (i, c) in contenders.iter().enumerate() {
            if keep(c) && best.is_none_or(|b| c.time < contenders[b].time) {
                best = Some(i);
            }
        }
        best
    };
    let default_idx = contenders.iter().position(|c| c.choice == default_path).expect("the default path is a contender");
    let mut best = fastest(&eligible).unwrap_or(default_idx);
    // The minimum over many noisy candidates is biased low. A fresh timing of the winner
    // and of the default path decides whether the winner replaces the default (a winner
    // that does not beat it again is dropped) and gives the reported, unbiased times.
    let (mut time, mut default_time) = (contenders[best].time, default_time);
    if best != default_idx {
        let retime = |c: &Contender| -> Result<Option<f64>> {
            activity.begin(worker, format!("{what}: timing {} again", path_label(&c.path)));
            match measure.measure(backend, &p, &c.path, &s.timing) {
                Ok(samples) => Ok(median(&samples)),
                Err(e @ Error::Device { .. }) => Err(e),
                Err(e) => {
                    log::warn!("{what}: confirming {} failed: {e}", path_label(&c.path));
                    Ok(None)
                }
            }
        };
        let confirmed = (retime(&contenders[best])?, retime(&contenders[default_idx])?);
        match confirmed {
            (Some(w), Some(d)) if w < d => (time, default_time) = (w, d),
            // A default the file cannot name stays out: the winner is the fastest it can.
            (Some(w), d) if !eligible(&contenders[default_idx]) => (time, default_time) = (w, d.unwrap_or(default_time)),
            (w, d) => {
                log::info!("{what}: {} did not beat the default path again ({w:?} s vs {d:?} s); keeping the default", path_label(&contenders[best].path));
                best = default_idx;
                default_time = d.unwrap_or(default_time);
                time = default_time;
            }
        }
    }
    let best = &contenders[best];
    // Files for this crate record the launch choices the backend made by rule (the K split),
    // so a later rule change does not alter what the entry runs; vLLM's files cannot.
    let pin = |cfg: KernelConfig| if s.blockfp8_keys { backend.pinned_config(&cfg, &shape) } else { cfg };
    let config = match &best.path {
        GemmPath::Tuned(cfg) => pin(cfg.clone()),
        // The config the default path ran for this shape (the backend may pick per M).
        GemmPath::KernelDefault => pin(default_cfg.clone()),
        GemmPath::Vendor => {
            // Kernel fields for loaders that ignore PATH_KEY: the fastest correct kernel.
            let mut cfg = match fastest(&|c: &Contender| c.choice != Choice::Vendor).map(|i| &contenders[i].path) {
                Some(GemmPath::Tuned(c)) => c.clone(),
                _ => default_cfg.clone(),
            };
            cfg.extra.insert(PATH_KEY.into(), serde_json::Value::String("vendor".into()));
            cfg
        }
    };
    Ok(TuneRecord {
        device: dev.config_name(),
        dtype: super::DTYPE.into(),
        out_dtype: s.out_dtype.name().into(),
        scale_layout: super::layout_name(s.scale_layout).into(),
        n: item.n,
        k: item.k,
        block: item.block,
        m: item.m,
        choice: best.choice,
        config,
        time_us: time * 1e6,
        default_path,
        default_time_us: default_time * 1e6,
        vendor_time_us: vendor_time.map(|t| t * 1e6),
        kernel_default_time_us: kernel_default_time.map(|t| t * 1e6),
        calc_diff: best.diff,
        sampled_check: reference.sampled,
        candidates: configs.len(),
        skipped: skipped.len(),
        rejected,
        worker,
        seconds: started.elapsed().as_secs_f64(),
    })
}
