//! The tuner: shapes from model configs, work lists and shards, shard + merge == one run,
//! resume after a failure, concurrent workers, wrong-candidate rejection, default-path
//! records, and a real CPU tune whose file the config library then serves.

#[allow(unused_imports)]
use blockfp8::HostOps;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use blockfp8::backend::cpu::CpuBackend;
use blockfp8::backend::{Backend, BackendKind, GemmLaunch, GemmLaunchArgs, QuantTokensArgs, QuantWeightArgs, TimingOptions};
use blockfp8::memory::RawBuffer;
use blockfp8::{ScaleLayout, Stream};
use blockfp8::config::{ConfigTable, KernelConfig, Library, CLUSTER_KEY, PATH_KEY};
use blockfp8::device::Device;
use blockfp8::gemm::{BlockScaledGemm, GemmPath, GemmProblem, GemmShape, OutDtype};
use blockfp8::tune::{self, Choice, Measure, OnConflict, Shard, TuneOptions, WeightShape, WorkItem};
use blockfp8::{Error, Fp8Format, Result};

fn model(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/models").join(name).join("config.json")
}

fn nk_set(shapes: &[WeightShape]) -> BTreeSet<(usize, usize)> {
    shapes.iter().map(|s| (s.n, s.k)).collect()
}

// ---------------------------------------------------------------------------------------
// Shapes

#[test]
fn deepseek_v3_config_gives_its_layers_and_the_preset_covers_them() {
    let tp1 = tune::shapes_from_model_config(&model("deepseek-v3"), 1).unwrap();
    // By hand from the config: fused q_a+kv_a (1536+512+64), q_b (128 heads x 192),
    // kv_b (128 x (128+128)), o (128 x 128 in), dense MLP 18432, experts 2048 (x1 shared).
    let want: BTreeSet<(usize, usize)> =
        [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (36864, 7168), (7168, 18432), (4096, 7168), (7168, 2048)].into();
    assert_eq!(nk_set(&tp1), want);
    assert!(tp1.iter().all(|s| s.block == (128, 128)));
    // Dedupe: routed and shared experts have the same shapes at tp=1 and share an entry.
    let gate_up = tp1.iter().find(|s| (s.n, s.k) == (4096, 7168)).unwrap();
    assert!(gate_up.layers.len() >= 2, "{:?}", gate_up.layers);

    // The preset is the vLLM/SGLang list; the q-LoRA-less layout of the same architecture
    // explains (576, 7168) and (24576, 7168); (12288, 7168) is in the list but matches no
    // DeepSeek-V3 layer.
    let preset1 = nk_set(&tune::preset_shapes("deepseek-v3", 1).unwrap());
    let lite = nk_set(&tune::shapes_from_model_config(&model("deepseek-v2-lite-style"), 1).unwrap());
    assert!(lite.contains(&(576, 7168)) && lite.contains(&(24576, 7168)));
    let mut derived: BTreeSet<(usize, usize)> = want.union(&lite).copied().collect();
    derived.insert((12288, 7168));
    assert_eq!(derived, preset1);

    // tp=8: the doc's split list, and every derived shape is in the preset.
    let preset8 = nk_set(&tune::preset_shapes("deepseek-v3", 8).unwrap());
    let doc8: BTreeSet<(usize, usize)> = [
        (576, 7168), (2112, 7168), (24576, 7168), (32768, 512), (7168, 16384), (7168, 18432),
        (4608, 7168), (3072, 7168), (4096, 512), (3072, 1536), (1536, 7168), (512, 7168),
        (7168, 2304), (7168, 2048), (7168, 256),
    ]
    .into();
    assert_eq!(preset8, doc8);
    let tp8 = nk_set(&tune::shapes_from_model_config(&model("deepseek-v3"), 8).unwrap());
    assert_eq!(tp8, [(2112, 7168), (3072, 1536), (4096, 512), (7168, 2048), (4608, 7168), (7168, 2304), (512, 7168), (7168, 256)].into());
    assert!(tp8.is_subset(&preset8));
}

#[test]
fn deepseek_v32_indexer_projections_are_included() {
    let mut cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(model("deepseek-v3")).unwrap()).unwrap();
    cfg["index_n_heads"] = 64.into();
    cfg["index_head_dim"] = 128.into();
    let v32 = nk_set(&tune::shapes_from_model_json(&cfg, 8).unwrap());
    let v3 = nk_set(&tune::shapes_from_model_config(&model("deepseek-v3"), 8).unwrap());
    // Replicated indexer wq_b (64 heads x 128 from q_lora 1536) and wk (128 from hidden).
    let extra: BTreeSet<(usize, usize)> = v32.difference(&v3).copied().collect();
    assert_eq!(extra, [(8192, 1536), (128, 7168)].into());
}

#[test]
fn qwen3_dense_and_moe_configs() {
    // Qwen3-8B: 32 q heads, 8 kv heads of 128; MLP 12288.
    let q = tune::shapes_from_model_config(&model("qwen3-8b-fp8"), 1).unwrap();
    assert_eq!(nk_set(&q), [(6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288)].into());
    let q2 = tune::shapes_from_model_config(&model("qwen3-8b-fp8"), 2).unwrap();
    assert_eq!(nk_set(&q2), [(3072, 4096), (4096, 2048), (12288, 4096), (4096, 6144)].into());
    // tp=16 > 8 kv heads: each rank keeps 2 q heads and one replicated k and v head.
    let q16 = tune::shapes_from_model_config(&model("qwen3-8b-fp8"), 16).unwrap();
    assert!(nk_set(&q16).contains(&(512, 4096)));
    // Qwen3-30B-A3B: every layer MoE (no dense MLP), experts 768 wide.
    let moe = tune::shapes_from_model_config(&model("qwen3-30b-a3b-fp8"), 1).unwrap();
    assert_eq!(nk_set(&moe), [(5120, 2048), (2048, 4096), (1536, 2048), (2048, 768)].into());
    let moe4 = tune::shapes_from_model_config(&model("qwen3-30b-a3b-fp8"), 4).unwrap();
    assert_eq!(nk_set(&moe4), [(1280, 2048), (2048, 1024), (384, 2048), (2048, 192)].into());
}

#[test]
fn bad_models_and_shapes_are_clear_errors() {
    let e = tune::shapes_from_model_config(&model("llama-per-tensor-fp8"), 1).unwrap_err();
    assert!(matches!(e, Error::Config { .. }) && e.to_string().contains("weight_block_size"), "{e}");
    let mut cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(model("qwen3-8b-fp8")).unwrap()).unwrap();
    cfg["quantization_config"]["quant_method"] = "gptq".into();
    assert!(tune::shapes_from_model_json(&cfg, 1).unwrap_err().to_string().contains("gptq"));
    cfg.as_object_mut().unwrap().remove("quantization_config");
    assert!(tune::shapes_from_model_json(&cfg, 1).unwrap_err().to_string().contains("quantization_config"));
    // 32 heads do not split over 3 ranks.
    let e = tune::shapes_from_model_config(&model("qwen3-8b-fp8"), 3).unwrap_err();
    assert!(e.to_string().contains("not divisible"), "{e}");
    assert!(tune::shapes_from_model_config(&model("deepseek-v3"), 0).is_err());
    assert!(tune::shapes_from_model_config(Path::new("/nonexistent/config.json"), 1).is_err());
    assert!(tune::preset_shapes("llama-3", 1).unwrap_err().to_string().contains("deepseek-v3"));
    assert_eq!(tune::parse_shape("4096,7168").unwrap().key(), (4096, 7168, (128, 128)));
    assert_eq!(tune::parse_shape("256x512").unwrap().key(), (256, 512, (128, 128)));
    assert_eq!(tune::parse_shape("256,512,64,64").unwrap().block, (64, 64));
    for bad in ["", "4096", "0,7168", "a,b", "1,2,3", "4096,7168,0,128"] {
        assert!(tune::parse_shape(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn shape_spec_unites_sources() {
    let spec = tune::ShapeSpec {
        preset: None,
        model_config: Some(model("qwen3-8b-fp8")),
        tp_size: Some(2),
        shapes: vec!["3072,4096".into(), "100,200".into()],
    };
    let got: Vec<(usize, usize)> = spec.resolve().unwrap().iter().map(|s| (s.n, s.k)).collect();
    // 3072x4096 is the model's qkv_proj at tp 2: listed once, in the model's order.
    assert_eq!(got, vec![(3072, 4096), (4096, 2048), (12288, 4096), (4096, 6144), (100, 200)]);
    let both = tune::ShapeSpec { preset: Some("deepseek-v3".into()), model_config: Some(model("deepseek-v3")), tp_size: Some(8), shapes: vec![] };
    assert_eq!(both.resolve().unwrap().len(), 15, "the model's tp-8 shapes are all in the preset");
    assert!(tune::ShapeSpec::default().resolve().is_err());
    assert!(tune::open_workers(BackendKind::Cpu, &[]).is_err());
    assert!(tune::open_workers(BackendKind::Cpu, &[0, 0]).is_err());
    assert_eq!(tune::open_workers(BackendKind::Cpu, &[0]).unwrap().len(), 1);
}

#[test]
fn shards_partition_the_work_list_deterministically() {
    let shapes = tune::preset_shapes("deepseek-v3", 8).unwrap();
    let grid = tune::DEFAULT_BATCH_SIZES;
    let full = tune::full_work_list(&shapes, &grid);
    assert_eq!(full.len(), shapes.len() * 18);
    assert_eq!(full, tune::full_work_list(&shapes, &grid));
    for count in [1, 2, 3, 7, 64] {
        let mut seen: Vec<WorkItem> = Vec::new();
        for i in 0..count {
            let part = tune::shard_work_list(&shapes, &grid, Shard::new(i, count).unwrap());
            assert!(part.len().abs_diff(full.len() / count) <= 1);
            seen.extend(part);
        }
        seen.sort();
        let mut all = full.clone();
        all.sort();
        assert_eq!(seen, all, "shards of {count} must cover every item exactly once");
    }
    assert_eq!("2/4".parse::<Shard>().unwrap(), Shard { index: 2, count: 4 });
    for bad in ["4/4", "1/0", "x/2", "3"] {
        assert!(bad.parse::<Shard>().is_err(), "{bad:?}");
    }
    assert_eq!(tune::normalize_batch_sizes(&[64, 1, 64, 8]).unwrap(), vec![1, 8, 64]);
    assert!(tune::normalize_batch_sizes(&[0]).is_err() && tune::normalize_batch_sizes(&[]).is_err());
}

// ---------------------------------------------------------------------------------------
// Test seams: deterministic timings, backends that lie.

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// Times that depend only on (path, shape), so every worker, shard and rerun agrees.
/// `fail_after`: every call after that many returns an error (a crash mid-run).
#[derive(Default)]
struct FakeTiming {
    calls: AtomicUsize,
    fail_after: Option<usize>,
    /// Paths whose time is forced (label -> seconds).
    forced: HashMap<String, f64>,
    /// Items measured, for resume checks.
    seen: Mutex<BTreeSet<(usize, usize, usize)>>,
    /// Paths measured (labels), for exclusion checks.
    timed: Mutex<BTreeSet<String>>,
    /// Random sleeps to shuffle worker interleavings.
    jitter: bool,
    /// A fixed sleep per call (a slow device).
    sleep_ms: u64,
}

fn label(path: &GemmPath) -> String {
    match path {
        GemmPath::Tuned(c) => tune::candidate_label(c),
        GemmPath::Vendor => "vendor".into(),
        GemmPath::KernelDefault => "default".into(),
    }
}

impl Measure for FakeTiming {
    fn measure(&self, _b: &dyn Backend, p: &GemmProblem, path: &GemmPath, _o: &TimingOptions) -> Result<Vec<f64>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.fail_after.is_some_and(|f| n >= f) {
            return Err(Error::Device { backend: "fake", call: "time".into(), reason: "device lost".into() });
        }
        let s = p.shape;
        self.seen.lock().unwrap().insert((s.n, s.k, s.m));
        self.timed.lock().unwrap().insert(label(path));
        if self.jitter {
            std::thread::sleep(std::time::Duration::from_micros(fnv(&format!("{n}")) % 300));
        }
        std::thread::sleep(std::time::Duration::from_millis(self.sleep_ms));
        let l = label(path);
        let t = self.forced.get(&l).copied().unwrap_or_else(|| 1e-5 * (1.0 + (fnv(&format!("{l}/{}/{}/{}", s.n, s.k, s.m)) % 1000) as f64 / 250.0));
        Ok(vec![t * 1.1, t, t * 0.9 + t * 0.1])
    }
}

fn cpu() -> Arc<dyn Backend> {
    Arc::new(CpuBackend::new())
}

fn small_shapes() -> Vec<WeightShape> {
    ["256,256", "128,384", "384,128"].iter().map(|s| tune::parse_shape(s).unwrap()).collect()
}

fn opts(shapes: Vec<WeightShape>, dir: &Path, ms: &[usize]) -> TuneOptions {
    let mut o = TuneOptions::new(shapes, dir.to_path_buf());
    o.batch_sizes = ms.to_vec();
    o.progress = false;
    o.timing = TimingOptions { warmup: 1, repeats: 3, rotate_bytes: 0, ..Default::default() };
    o
}

/// Config files of a folder: name -> contents.
fn config_files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}

const MS: [usize; 6] = [1, 3, 16, 48, 96, 130];

#[test]
fn shard_and_merge_equal_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let single = tmp.path().join("single");
    let one = tune::tune_with(&[cpu()], &opts(small_shapes(), &single, &MS), &FakeTiming::default()).unwrap();
    assert_eq!(one.records.len(), 3 * MS.len());
    let want = config_files(&single);
    assert_eq!(want.len(), 3);

    let mut shard_dirs = Vec::new();
    for i in 0..4 {
        let dir = tmp.path().join(format!("shard{i}"));
        let mut o = opts(small_shapes(), &dir, &MS);
        o.shard = Shard::new(i, 4).unwrap();
        let r = tune::tune_with(&[cpu()], &o, &FakeTiming::default()).unwrap();
        assert!(r.records.len() < one.records.len());
        shard_dirs.push(dir);
    }
    let merged = tmp.path().join("merged");
    let report = tune::merge(&shard_dirs, &merged, OnConflict::Error).unwrap();
    assert_eq!(report.entries, 3 * MS.len());
    assert_eq!(report.journal_records, 3 * MS.len());
    assert_eq!(config_files(&merged), want, "merged shards must equal one run byte for byte");
    assert!(report.journal_only.is_empty());
    // A shard that stopped before finishing a shape has journal lines but no file for it:
    // the merge says so instead of silently dropping those batch sizes.
    std::fs::remove_file(shard_dirs[2].join(want.keys().next().unwrap())).unwrap();
    let partial = tune::merge(&shard_dirs, &tmp.path().join("partial"), OnConflict::Error).unwrap();
    let missing: Vec<usize> = partial.journal_only.iter().map(|(_, m)| *m).collect();
    assert!(!missing.is_empty() && partial.journal_only.iter().all(|(f, _)| f == want.keys().next().unwrap()), "{missing:?}");
    assert_eq!(partial.entries + missing.len(), 3 * MS.len());
    // Merging the merged output with a shard again changes nothing (identical entries).
    let again = tmp.path().join("again");
    tune::merge(&[merged.clone(), shard_dirs[1].clone()], &again, OnConflict::Error).unwrap();
    assert_eq!(config_files(&again), want);
}

#[test]
fn merge_conflicts_fail_or_keep_the_faster() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    tune::tune_with(&[cpu()], &opts(shapes.clone(), &a, &[1, 16]), &FakeTiming::default()).unwrap();
    // Another "device" run where a different config wins at every M, and faster.
    let candidates = CpuBackend::new().candidate_configs();
    assert!(candidates.len() >= 2, "the CPU backend offers a search space");
    let fastest = candidates.last().unwrap().short();
    let forced = FakeTiming { forced: [(fastest.clone(), 1e-9)].into(), ..Default::default() };
    tune::tune_with(&[cpu()], &opts(shapes, &b, &[1, 16]), &forced).unwrap();
    let e = tune::merge(&[a.clone(), b.clone()], &tmp.path().join("x"), OnConflict::Error).unwrap_err();
    assert!(e.to_string().contains("conflicting entries"), "{e}");
    assert!(!tmp.path().join("x").exists() || config_files(&tmp.path().join("x")).is_empty(), "nothing written on error");
    let out = tmp.path().join("y");
    let r = tune::merge(&[a, b.clone()], &out, OnConflict::KeepFaster).unwrap();
    assert_eq!(r.resolved.len(), 2);
    assert_eq!(config_files(&out), config_files(&b));
    for (_, text) in config_files(&out) {
        let t = ConfigTable::parse(&text).unwrap();
        assert!(t.entries.iter().all(|(_, c)| c.short() == fastest));
    }
}

#[test]
fn a_failed_run_resumes_without_redoing_finished_items() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("reference");
    tune::tune_with(&[cpu()], &opts(small_shapes(), &reference, &MS), &FakeTiming::default()).unwrap();
    let per_item_calls = {
        let t = FakeTiming::default();
        tune::tune_with(&[cpu()], &opts(vec![tune::parse_shape("256,256").unwrap()], &tmp.path().join("count"), &[1]), &t).unwrap();
        t.calls.load(Ordering::SeqCst)
    };

    let dir = tmp.path().join("run");
    // Dies in the middle of the 8th item.
    let crash = FakeTiming { fail_after: Some(7 * per_item_calls + per_item_calls / 2), ..Default::default() };
    let e = tune::tune_with(&[cpu()], &opts(small_shapes(), &dir, &MS), &crash).unwrap_err();
    assert!(e.to_string().contains("device lost"), "{e}");
    let o = opts(small_shapes(), &dir, &MS);
    let journaled = tune::read_journal(&o.journal_path()).unwrap();
    let total = 3 * MS.len();
    assert!((6..total).contains(&journaled.len()), "{} of {total} journaled", journaled.len());
    // The first shape (6 items) was complete and has its file; the last one has not.
    assert_eq!(config_files(&dir).len(), journaled.len() / MS.len());
    // A kill during the next append leaves a torn line; it must be ignored.
    let mut f = std::fs::OpenOptions::new().append(true).open(o.journal_path()).unwrap();
    std::io::Write::write_all(&mut f, b"{\"device\":\"torn").unwrap();
    drop(f);

    let counting = FakeTiming::default();
    let r = tune::tune_with(&[cpu()], &o, &counting).unwrap();
    assert_eq!(r.resumed, journaled.len());
    assert_eq!(r.tuned_now, total - journaled.len());
    let done: BTreeSet<(usize, usize, usize)> = journaled.iter().map(|r| (r.n, r.k, r.m)).collect();
    let measured = counting.seen.lock().unwrap().clone();
    assert!(measured.is_disjoint(&done), "finished items measured again: {:?}", measured.intersection(&done).collect::<Vec<_>>());
    assert_eq!(measured.len(), total - journaled.len());
    assert_eq!(config_files(&dir), config_files(&reference));
    // A third run has nothing left to do.
    let idle = FakeTiming::default();
    let r = tune::tune_with(&[cpu()], &o, &idle).unwrap();
    assert_eq!((r.resumed, r.tuned_now, idle.calls.load(Ordering::SeqCst)), (3 * MS.len(), 0, 0));
    // resume = false starts over.
    let mut fresh = o.clone();
    fresh.resume = false;
    assert_eq!(tune::tune_with(&[cpu()], &fresh, &FakeTiming::default()).unwrap().tuned_now, 3 * MS.len());
}

#[test]
fn concurrent_workers_never_lose_a_result() {
    let tmp = tempfile::tempdir().unwrap();
    let shapes: Vec<WeightShape> = ["128,128", "256,128", "128,256", "384,128", "128,384"].iter().map(|s| tune::parse_shape(s).unwrap()).collect();
    let ms: Vec<usize> = (1..=24).collect();
    let one_dir = tmp.path().join("one");
    tune::tune_with(&[cpu()], &opts(shapes.clone(), &one_dir, &ms), &FakeTiming::default()).unwrap();
    let many_dir = tmp.path().join("many");
    let workers: Vec<Arc<dyn Backend>> = (0..8).map(|_| cpu()).collect();
    let jitter = FakeTiming { jitter: true, ..Default::default() };
    let r = tune::tune_with(&workers, &opts(shapes.clone(), &many_dir, &ms), &jitter).unwrap();
    assert_eq!(r.records.len(), shapes.len() * ms.len());
    assert!(r.workers.iter().filter(|w| w.items > 0).count() >= 2, "work spread over workers: {:?}", r.workers);
    assert_eq!(r.workers.iter().map(|w| w.items).sum::<usize>(), shapes.len() * ms.len());
    let table = tune::render_workers(&r.workers);
    assert_eq!(table.lines().count(), 2 + 8, "{table}");
    let journal = tune::read_journal(&r.journal).unwrap();
    let keys: BTreeSet<(usize, usize, usize)> = journal.iter().map(|r| (r.n, r.k, r.m)).collect();
    assert_eq!((journal.len(), keys.len()), (shapes.len() * ms.len(), shapes.len() * ms.len()));
    let files = config_files(&many_dir);
    for s in &shapes {
        let name = blockfp8::config::dense_file_name(s.n, s.k, &CpuBackend::new().device().config_name(), "fp8_w8a8", s.block);
        let table = ConfigTable::parse(&files[&name]).unwrap();
        assert_eq!(table.entries.iter().map(|(m, _)| *m).collect::<Vec<_>>(), ms, "{name}");
    }
    assert_eq!(files, config_files(&one_dir), "8 workers choose what 1 worker chooses");
}

/// Independent statement of vLLM's rule: min over ascending keys of |key - M|, first wins.
fn vllm_nearest(keys: &[usize], m: usize) -> usize {
    let mut best = keys[0];
    for &k in keys {
        if k.abs_diff(m) < best.abs_diff(m) {
            best = k;
        }
    }
    best
}

// ---------------------------------------------------------------------------------------
// Candidates: wrong ones rejected, defaults kept, vendor recorded.

/// The CPU backend, plus a "vendor" path (the CPU default) and one candidate config whose
/// results are corrupted.
struct LyingBackend {
    inner: CpuBackend,
    vendor: bool,
    broken: Option<KernelConfig>,
    /// Candidates beyond the CPU backend's.
    extra: Vec<KernelConfig>,
    /// A K split this backend "chooses by rule" and writes out in `pinned_config`.
    pin_split: Option<u64>,
    /// The kernel default above M = 8 is `wide_config()` (like CUDA's 128x192 at large M).
    wide_default: bool,
    /// K splits besides the rule's, for every config that does not fix its own.
    split_alts: Vec<u32>,
}

impl LyingBackend {
    /// The CPU backend unchanged: no vendor path, nothing broken, no extra candidates.
    fn honest() -> Self {
        LyingBackend { inner: CpuBackend::new(), vendor: false, broken: None, extra: vec![], pin_split: None, wide_default: false, split_alts: vec![] }
    }
}

/// A BLOCK_SIZE_N = 192 variant of a CPU candidate: valid in blockfp8's files, not in vLLM's.
fn wide_config() -> KernelConfig {
    let mut wide = CpuBackend::new().candidate_configs()[0].clone();
    wide.block_n = 192;
    wide
}

impl Backend for LyingBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn device(&self) -> &Device {
        self.inner.device()
    }
    fn alloc(&self, bytes: usize) -> Result<RawBuffer> {
        self.inner.alloc(bytes)
    }
    fn new_stream(&self) -> Result<Stream> {
        self.inner.new_stream()
    }
    fn check_raw_stream(&self, raw: u64) -> Result<()> {
        self.inner.check_raw_stream(raw)
    }
    fn check_raw_memory(&self, addr: u64, bytes: usize) -> Result<()> {
        self.inner.check_raw_memory(addr, bytes)
    }
    unsafe fn copy_to_device(&self, s: &Stream, dst: u64, src: &[u8]) -> Result<()> {
        self.inner.copy_to_device(s, dst, src)
    }
    unsafe fn copy_to_host(&self, s: &Stream, src: u64, dst: &mut [u8]) -> Result<()> {
        self.inner.copy_to_host(s, src, dst)
    }
    unsafe fn copy_on_device(&self, s: &Stream, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.inner.copy_on_device(s, dst, src, bytes)
    }
    fn synchronize(&self, s: &Stream) -> Result<()> {
        self.inner.synchronize(s)
    }
    unsafe fn enqueue_quantize_tokens(&self, s: &Stream, a: &QuantTokensArgs) -> Result<()> {
        self.inner.enqueue_quantize_tokens(s, a)
    }
    unsafe fn enqueue_quantize_weight(&self, s: &Stream, a: &QuantWeightArgs) -> Result<()> {
        self.inner.enqueue_quantize_weight(s, a)
    }
    unsafe fn enqueue_convert_to_fnuz(&self, s: &Stream, q: u64, bytes: usize, sc: u64, scales: usize) -> Result<()> {
        self.inner.enqueue_convert_to_fnuz(s, q, bytes, sc, scales)
    }
    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        match path {
            GemmPath::Vendor if self.vendor => Ok(()),
            _ => self.inner.supports(shape, path),
        }
    }
    fn resolve_gemm(&self, shape: &GemmShape, path: &GemmPath, layout: ScaleLayout) -> Result<Box<dyn GemmLaunch>> {
        let inner = match path {
            GemmPath::Vendor if self.vendor => self.inner.resolve_gemm(shape, &GemmPath::KernelDefault, layout)?,
            _ => self.inner.resolve_gemm(shape, path, layout)?,
        };
        let broken = matches!(path, GemmPath::Tuned(c) if Some(c) == self.broken.as_ref());
        Ok(if broken { Box::new(LastRowGarbage { inner, out: shape.out_dtype }) } else { inner })
    }
    fn candidate_configs(&self) -> Vec<KernelConfig> {
        self.inner.candidate_configs().into_iter().chain(self.extra.iter().cloned()).collect()
    }
    fn default_config(&self) -> KernelConfig {
        self.inner.default_config()
    }
    /// Picks per batch size, like the CUDA backend's heuristic: a config other than
    /// `default_config` for small M.
    fn pinned_config(&self, cfg: &KernelConfig, _shape: &GemmShape) -> KernelConfig {
        let mut c = cfg.clone();
        if let Some(s) = self.pin_split {
            c.extra.insert("SPLIT_K".into(), s.into());
        }
        c
    }
    fn split_alternatives(&self, cfg: &KernelConfig, _shape: &GemmShape) -> Vec<u32> {
        if cfg.extra.contains_key("SPLIT_K") {
            Vec::new()
        } else {
            self.split_alts.clone()
        }
    }
    fn default_config_for(&self, shape: &GemmShape) -> KernelConfig {
        if self.wide_default && shape.m > 8 {
            wide_config()
        } else if shape.m <= 8 {
            self.inner.candidate_configs()[3].clone()
        } else {
            self.inner.default_config()
        }
    }
}

/// A tile-indexing bug: the last output row is garbage (-first row - 1).
struct LastRowGarbage {
    inner: Box<dyn GemmLaunch>,
    out: OutDtype,
}

impl GemmLaunch for LastRowGarbage {
    fn describe(&self) -> String {
        format!("broken {}", self.inner.describe())
    }
    fn workspace_bytes(&self, m: usize) -> usize {
        self.inner.workspace_bytes(m)
    }
    unsafe fn enqueue(&self, s: &Stream, a: &GemmLaunchArgs) -> Result<()> {
        self.inner.enqueue(s, a)?;
        let (m, n) = (a.m, a.n);
        let bytes = self.out.bytes();
        let c = std::slice::from_raw_parts_mut(a.c as *mut u8, m * n * bytes);
        let read = |c: &[u8], i: usize| -> f32 {
            match self.out {
                OutDtype::F32 => f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap()),
                OutDtype::Bf16 => half::bf16::from_le_bytes([c[2 * i], c[2 * i + 1]]).to_f32(),
                OutDtype::F16 => half::f16::from_le_bytes([c[2 * i], c[2 * i + 1]]).to_f32(),
            }
        };
        for j in 0..n {
            let v = -read(c, j) - 1.0;
            let i = (m - 1) * n + j;
            match self.out {
                OutDtype::F32 => c[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
                OutDtype::Bf16 => c[2 * i..2 * i + 2].copy_from_slice(&half::bf16::from_f32(v).to_le_bytes()),
                OutDtype::F16 => c[2 * i..2 * i + 2].copy_from_slice(&half::f16::from_f32(v).to_le_bytes()),
            }
        }
        Ok(())
    }
}

/// A tile the backend runs but a config file cannot name (BLOCK_SIZE_N 96) is skipped with
/// its reason, even when it would be the fastest.
#[test]
fn candidates_a_config_file_cannot_hold_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut odd = CpuBackend::new().candidate_configs()[0].clone();
    odd.block_n = 96;
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { extra: vec![odd.clone()], ..LyingBackend::honest() });
    let shape = GemmShape { m: 16, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
    let (keep, skipped) = tune::candidate_configs(backend.as_ref(), &shape, true, &[]);
    assert!(!keep.contains(&odd) && !keep.is_empty());
    let why = skipped.iter().find(|r| r.config == odd.short()).expect("the odd tile is reported");
    assert!(why.reason.contains("power of two"), "{}", why.reason);
    let t = FakeTiming { forced: [(odd.short(), 1e-9)].into(), ..Default::default() };
    let dir = tmp.path().join("w");
    let r = tune::tune_with(&[backend], &opts(vec![tune::parse_shape("256,256").unwrap()], &dir, &[1, 16]), &t).unwrap();
    assert!(r.records.iter().all(|rec| rec.config != odd && rec.skipped >= 1));
    // What was written loads.
    for (name, text) in config_files(&dir) {
        ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// BLOCK_SIZE_N = 192 (CUDA's 128x192 tile) goes into blockfp8's files, as a candidate or as
/// the kernel default that won; files for vLLM get neither.
#[test]
fn the_wide_tile_is_blockfp8_only() {
    let tmp = tempfile::tempdir().unwrap();
    let wide = wide_config();
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { extra: vec![wide.clone()], ..LyingBackend::honest() });
    let shape = GemmShape { m: 16, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
    assert!(tune::candidate_configs(backend.as_ref(), &shape, true, &[]).0.contains(&wide));
    let (keep, skipped) = tune::candidate_configs(backend.as_ref(), &shape, false, &[]);
    assert!(!keep.contains(&wide) && skipped.iter().any(|r| r.config == wide.short() && r.reason.contains("blockfp8-only")));
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    let t = FakeTiming { forced: [(wide.short(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &tmp.path().join("a"), &[16]), &t).unwrap();
    assert_eq!(r.records[0].config.block_n, 192);
    for (name, text) in config_files(&tmp.path().join("a")) {
        let (_, cfg) = ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}")).nearest(16).map(|(m, c)| (m, c.clone())).unwrap();
        assert_eq!(cfg.block_n, 192, "{name}");
    }
    // The kernel default is the wide tile and by far the fastest: a vLLM file gets the
    // fastest config it can name instead, a blockfp8 file the default's config.
    let wide_default: Arc<dyn Backend> = Arc::new(LyingBackend { wide_default: true, ..LyingBackend::honest() });
    let t = FakeTiming { forced: [("default".to_string(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&wide_default), &opts(shapes.clone(), &tmp.path().join("b"), &[16]), &t).unwrap();
    assert_eq!((r.records[0].choice, r.records[0].config.block_n), (Choice::KernelDefault, 192));
    let mut compat = opts(shapes, &tmp.path().join("c"), &[16]);
    compat.blockfp8_keys = false;
    let r = tune::tune_with(std::slice::from_ref(&wide_default), &compat, &t).unwrap();
    assert!(r.records[0].choice == Choice::Tuned && !r.records[0].config.is_blockfp8_only(), "{:?}", r.records[0]);
    for (name, text) in config_files(&tmp.path().join("c")) {
        let t = ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(t.entries.iter().all(|(_, c)| !c.is_blockfp8_only()), "{name}");
    }
}

/// Wide tiles (128 x 192 and wider) are also timed with `WIDE_TILE_GROUP_M` rows of tiles per
/// group where the shape has that many rows of them; a regrouped winner's GROUP_SIZE_M is
/// what the file says.
#[test]
fn wide_tiles_are_also_tried_in_larger_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let mut wide = CpuBackend::new().candidate_configs()[0].clone();
    (wide.block_m, wide.block_n) = (128, 256);
    let regrouped = KernelConfig { group_m: tune::WIDE_TILE_GROUP_M, ..wide.clone() };
    assert_ne!(wide.group_m, regrouped.group_m);
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { extra: vec![wide.clone()], ..LyingBackend::honest() });
    let shape = |m| GemmShape { m, n: 256, k: 128, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
    // 16 rows of 128-row tiles from M = 1921; the CPU's own tiles (at most 64 rows) stay as they are.
    let keep = tune::candidate_configs(backend.as_ref(), &shape(1921), true, &[]).0;
    assert!(keep.contains(&wide) && keep.contains(&regrouped));
    assert_eq!(keep.iter().filter(|c| c.group_m == tune::WIDE_TILE_GROUP_M).count(), 1, "{:?}", keep.iter().map(|c| c.short()).collect::<Vec<_>>());
    assert!(!tune::candidate_configs(backend.as_ref(), &shape(1920), true, &[]).0.contains(&regrouped));
    let shapes = vec![tune::parse_shape("256,128").unwrap()];
    let t = FakeTiming { forced: [(regrouped.short(), 1e-9)].into(), ..Default::default() };
    let dir = tmp.path().join("g");
    let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes, &dir, &[2048]), &t).unwrap();
    assert_eq!((r.records[0].choice, r.records[0].config.group_m), (Choice::Tuned, tune::WIDE_TILE_GROUP_M), "{:?}", r.records[0]);
    for (name, text) in config_files(&dir) {
        let table = ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, cfg) = table.nearest(2048).unwrap();
        assert_eq!((cfg.block_n, cfg.group_m), (256, tune::WIDE_TILE_GROUP_M), "{name}: {text}");
    }
}

/// Where the backend names other K splits than its rule's, each config is also timed at
/// them, as candidates of their own (`<config>/split<S>`); a winner's SPLIT_K is what the file
/// says. Files for vLLM, which cannot hold a SPLIT_K, get no such candidates. A split
/// candidate can be excluded by its own name.
#[test]
fn other_k_splits_are_timed_as_candidates_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { split_alts: vec![1, 3], ..LyingBackend::honest() });
    let shape = GemmShape { m: 16, n: 256, k: 512, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
    let base = CpuBackend::new().candidate_configs();
    let split_of = |c: &KernelConfig| c.extra.get("SPLIT_K").and_then(|v| v.as_u64());
    let (keep, _) = tune::candidate_configs(backend.as_ref(), &shape, true, &[]);
    for c in &base {
        let splits: BTreeSet<Option<u64>> = keep.iter().filter(|k| k.short() == c.short()).map(split_of).collect();
        assert_eq!(splits, [None, Some(1), Some(3)].into(), "{}", c.short());
    }
    assert_eq!(keep.len(), 3 * base.len());
    let (vllm, skipped) = tune::candidate_configs(backend.as_ref(), &shape, false, &[]);
    assert!(vllm.iter().all(|c| split_of(c).is_none()) && vllm.len() == base.len());
    assert!(skipped.iter().all(|r| !r.config.contains("/split")), "{skipped:?}");

    // The unsplit variant of one config is by far the fastest: it wins with its SPLIT_K.
    let winner = base[2].clone();
    let name = format!("{}/split1", winner.short());
    let shapes = vec![tune::parse_shape("256,512").unwrap()];
    let t = FakeTiming { forced: [(name.clone(), 1e-9)].into(), ..Default::default() };
    let dir = tmp.path().join("a");
    let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &dir, &[16]), &t).unwrap();
    let rec = &r.records[0];
    assert_eq!((rec.choice, rec.config.short(), split_of(&rec.config)), (Choice::Tuned, winner.short(), Some(1)), "{rec:?}");
    assert_eq!(rec.candidates, 3 * base.len());
    let (_, table) = config_files(&dir).into_iter().next().unwrap();
    let (_, cfg) = ConfigTable::parse(&table).unwrap().nearest(16).map(|(m, c)| (m, c.clone())).unwrap();
    assert_eq!((cfg.short(), split_of(&cfg)), (winner.short(), Some(1)));

    // Excluded by its own name, it is never timed; its unsplit and split-3 siblings are.
    let mut o = opts(shapes, &tmp.path().join("b"), &[16]);
    o.exclude = vec![name.clone()];
    let t = FakeTiming { forced: [(name.clone(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&backend), &o, &t).unwrap();
    let timed = t.timed.lock().unwrap();
    assert!(!timed.contains(&name) && timed.contains(&winner.short()) && timed.contains(&format!("{}/split3", winner.short())));
    assert_ne!((r.records[0].config.short(), split_of(&r.records[0].config)), (winner.short(), Some(1)));
    // A split name of a config the build does not compile, or a split out of range, is refused.
    for bad in ["m7n7k128g8w4/split1".to_string(), format!("{}/split0", winner.short()), format!("{}/splitx", winner.short())] {
        let mut o = opts(vec![tune::parse_shape("256,512").unwrap()], &tmp.path().join("c"), &[16]);
        o.exclude = vec![bad.clone()];
        let e = tune::tune_with(std::slice::from_ref(&backend), &o, &FakeTiming::default()).unwrap_err();
        assert!(e.to_string().contains(&bad), "{e}");
    }
}

/// The entry a plan runs now (`TuneOptions::served`) is timed too, with its own K split, and
/// stays when it is the fastest; an entry naming the vendor path adds nothing (that path is
/// timed anyway), and one a config file cannot hold is reported as skipped.
#[test]
fn the_entry_a_plan_runs_now_is_timed_too() {
    let tmp = tempfile::tempdir().unwrap();
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend::honest());
    let served_dir = tmp.path().join("served");
    std::fs::create_dir_all(&served_dir).unwrap();
    let file = blockfp8::config::dense_file_name(256, 512, &backend.device().name, "fp8_w8a8", (128, 128));
    let write = |m: usize, cfg: &KernelConfig| std::fs::write(served_dir.join(&file), tune::table_json(&[(m, cfg.clone())].into())).unwrap();
    // A CPU tile at a K split no candidate has: the run can only get it from the served file.
    let base = CpuBackend::new().candidate_configs();
    let served = base[1].with_split_k(3);
    let name = tune::candidate_label(&served);
    write(8, &served);
    let shapes = vec![tune::parse_shape("256,512").unwrap()];
    let run = |dir: &str, with_served: bool| {
        let mut o = opts(shapes.clone(), &tmp.path().join(dir), &[16]);
        if with_served {
            o.served = Some(Arc::new(Library::new(vec![served_dir.clone()], false, false)));
        }
        let t = FakeTiming { forced: [(name.clone(), 1e-9)].into(), ..Default::default() };
        let r = tune::tune_with(std::slice::from_ref(&backend), &o, &t).unwrap();
        let timed = t.timed.lock().unwrap().clone();
        (r.records[0].clone(), timed)
    };
    // Served (the entry nearest M = 16 is the file's M = 8) and the fastest: it is the entry.
    let (rec, timed) = run("a", true);
    assert!(timed.contains(&name));
    assert_eq!((rec.choice, &rec.config, rec.candidates), (Choice::Tuned, &served, base.len() + 1), "{rec:?}");
    // Not consulted: never timed.
    let (rec, timed) = run("b", false);
    assert!(!timed.contains(&name) && rec.config != served && rec.candidates == base.len());
    // An entry that names the vendor path adds no candidate.
    let mut vendor = served.clone();
    vendor.extra.insert(PATH_KEY.into(), "vendor".into());
    write(16, &vendor);
    let (rec, timed) = run("c", true);
    assert!(!timed.contains(&name) && rec.candidates == base.len());
    // One a vLLM file cannot hold (its K split) is skipped with the reason.
    write(16, &served);
    let mut o = opts(shapes.clone(), &tmp.path().join("d"), &[16]);
    o.served = Some(Arc::new(Library::new(vec![served_dir.clone()], false, false)));
    o.blockfp8_keys = false;
    let r = tune::tune_with(std::slice::from_ref(&backend), &o, &FakeTiming::default()).unwrap();
    let skip = r.records[0].skipped;
    let (_, skipped) = tune::candidate_configs(backend.as_ref(), &GemmShape { m: 16, n: 256, k: 512, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 }, false, &[]);
    assert_eq!(skip, skipped.len() + 1);
}

#[test]
fn wrong_candidates_are_rejected_and_defaults_kept_when_nothing_is_faster() {
    let tmp = tempfile::tempdir().unwrap();
    let cands = CpuBackend::new().candidate_configs();
    let broken = cands[0].clone();
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { broken: Some(broken.clone()), ..LyingBackend::honest() });
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    // The broken config would be by far the fastest.
    let t = FakeTiming { forced: [(broken.short(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &tmp.path().join("a"), &[1, 16]), &t).unwrap();
    for rec in &r.records {
        assert_ne!(rec.config, broken);
        let rej = rec.rejected.iter().find(|x| x.config == broken.short()).expect("broken config reported");
        assert!(rej.reason.contains("calc_diff"), "{}", rej.reason);
        assert!(rec.calc_diff < 1e-4);
    }
    let summary = tune::render_summary(&r.records);
    assert!(summary.contains("speedup") && summary.lines().count() == 2 + r.records.len(), "{summary}");

    // The default path is the fastest: the entry is the config that path ran for that M
    // (the backend picks per shape), not the backend's one general default.
    let t = FakeTiming { forced: [("default".to_string(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &tmp.path().join("b"), &[1, 16]), &t).unwrap();
    let ran = |m: usize| backend.default_config_for(&GemmShape { m, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 });
    assert_ne!(ran(1), ran(16), "the test backend must pick per M");
    for rec in &r.records {
        assert_eq!((rec.choice, rec.default_path), (Choice::KernelDefault, Choice::KernelDefault));
        assert_eq!(rec.config, ran(rec.m), "M={}", rec.m);
        assert!((rec.speedup() - 1.0).abs() < 1e-12);
    }

    // A vendor path that wins is recorded with PATH_KEY, kernel fields intact, and the plan
    // of a library reading the file takes the vendor path.
    let vendor: Arc<dyn Backend> = Arc::new(LyingBackend { vendor: true, ..LyingBackend::honest() });
    let dir = tmp.path().join("c");
    let runner_up = CpuBackend::new().candidate_configs()[7].clone();
    let t = FakeTiming { forced: [("vendor".to_string(), 1e-9), (runner_up.short(), 2e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&vendor), &opts(shapes.clone(), &dir, &[1, 16]), &t).unwrap();
    for rec in &r.records {
        assert_eq!((rec.choice, rec.default_path), (Choice::Vendor, Choice::Vendor));
        assert_eq!(rec.config.extra.get(PATH_KEY).and_then(|v| v.as_str()), Some("vendor"));
        // Loaders that ignore the key run the fastest kernel config.
        let mut kernel_fields = rec.config.clone();
        kernel_fields.extra.remove(PATH_KEY);
        assert_eq!(kernel_fields, runner_up);
    }
    // For files vLLM will load: no vendor entries, no unknown keys; the entry replaces the
    // kernel default, and the vendor time is still reported.
    let mut compat = opts(shapes.clone(), &tmp.path().join("d"), &[1, 16]);
    compat.blockfp8_keys = false;
    let r = tune::tune_with(std::slice::from_ref(&vendor), &compat, &t).unwrap();
    for rec in &r.records {
        assert_eq!((rec.choice, rec.default_path, &rec.config), (Choice::Tuned, Choice::KernelDefault, &runner_up));
        assert!(rec.config.extra.is_empty() && rec.vendor_time_us.is_some());
    }
    let lib = Arc::new(Library::new(vec![dir], false, false));
    let gemm = BlockScaledGemm::new(vendor, lib);
    let shape = GemmShape { m: 4, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
    assert_eq!(gemm.plan(&shape), GemmPath::Vendor);
}

/// A later run into the same folder keeps the entries the file already has for other batch
/// sizes and replaces those of its own; a file there that does not parse stops the run before
/// any timing, and is left as it was.
#[test]
fn later_runs_keep_the_entries_of_other_batch_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend::honest());
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    let (a, b) = (CpuBackend::new().candidate_configs()[2].clone(), CpuBackend::new().candidate_configs()[5].clone());
    let first = FakeTiming { forced: [(a.short(), 1e-9)].into(), ..Default::default() };
    tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &dir, &[1, 16]), &first).unwrap();
    let second = FakeTiming { forced: [(b.short(), 1e-9)].into(), ..Default::default() };
    let mut again = opts(shapes.clone(), &dir, &[16, 48]);
    again.resume = false;
    let r = tune::tune_with(std::slice::from_ref(&backend), &again, &second).unwrap();
    assert_eq!(r.files.len(), 1);
    let entries: Vec<(usize, KernelConfig)> = ConfigTable::parse(&std::fs::read_to_string(&r.files[0]).unwrap()).unwrap().entries.into_iter().collect();
    assert_eq!(entries.iter().map(|(m, c)| (*m, c.short())).collect::<Vec<_>>(), [(1, a.short()), (16, b.short()), (48, b.short())]);

    std::fs::write(&r.files[0], "{\"16\": {\"BLOCK_SIZE_M\": 0").unwrap();
    let third = FakeTiming::default();
    let err = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes, &dir, &[64]), &third).unwrap_err().to_string();
    let name = r.files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.contains(&name) && err.contains("other entries"), "{err}");
    assert_eq!(third.calls.load(Ordering::SeqCst), 0, "nothing is timed");
    assert_eq!(std::fs::read_to_string(&r.files[0]).unwrap(), "{\"16\": {\"BLOCK_SIZE_M\": 0");
}

#[test]
fn real_cpu_tune_writes_a_file_the_library_serves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("configs");
    let backend = cpu();
    let r = tune::tune(std::slice::from_ref(&backend), &opts(vec![tune::parse_shape("256,256").unwrap()], &dir, &[1, 16])).unwrap();
    assert_eq!(r.records.len(), 2);
    for rec in &r.records {
        assert!(rec.time_us > 0.0 && rec.default_time_us > 0.0 && rec.calc_diff < 1e-4, "{rec:?}");
        assert!(rec.candidates >= 1);
        assert!(rec.speedup() >= 1.0, "the winner is never slower than the default path it replaces");
    }
    let dev = backend.device().config_name();
    let name = blockfp8::config::dense_file_name(256, 256, &dev, "fp8_w8a8", (128, 128));
    assert_eq!(r.files, vec![dir.join(&name)]);
    let text = std::fs::read_to_string(dir.join(&name)).unwrap();
    let table = ConfigTable::parse(&text).unwrap();
    let keys: Vec<usize> = table.entries.iter().map(|(m, _)| *m).collect();
    assert_eq!(keys, vec![1, 16]);
    // vLLM's nearest rule over the file.
    for m in 1..40 {
        assert_eq!(table.nearest(m).unwrap().0, vllm_nearest(&keys, m), "M={m}");
    }
    // The library finds the file and the plan runs the recorded config.
    let lib = Arc::new(Library::new(vec![dir.clone()], false, false));
    let served = lib.lookup(&dev, 256, 256, "fp8_w8a8", (128, 128)).expect("library reads the tuned file");
    assert_eq!(*served, table);
    let gemm = BlockScaledGemm::new(backend, lib);
    for (m, rec) in [(1, &r.records[0]), (20, &r.records[1])] {
        let shape = GemmShape { m, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
        let want = match rec.choice {
            Choice::Tuned => GemmPath::Tuned(rec.config.clone()),
            _ => GemmPath::Tuned(CpuBackend::new().default_config()),
        };
        assert_eq!(gemm.plan(&shape), want);
    }
    // No stray temporary files next to the outputs.
    let names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| n.ends_with(".json") || n.ends_with(".jsonl")), "{names:?}");
}

#[test]
fn mixed_device_models_and_empty_inputs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(tune::tune(&[], &opts(small_shapes(), tmp.path(), &[1])).is_err());
    assert!(tune::tune(&[cpu()], &opts(vec![], tmp.path(), &[1])).is_err());
    assert!(tune::tune(&[cpu()], &opts(small_shapes(), tmp.path(), &[])).is_err());
    assert!(tune::merge(&[], tmp.path(), OnConflict::Error).is_err());
    // Two shards in one folder would overwrite each other's files.
    let shared = tmp.path().join("shared");
    let mut a = opts(small_shapes(), &shared, &[1, 2]);
    a.shard = Shard::new(0, 2).unwrap();
    tune::tune_with(&[cpu()], &a, &FakeTiming::default()).unwrap();
    let mut b = a.clone();
    b.shard = Shard::new(1, 2).unwrap();
    let e = tune::tune_with(&[cpu()], &b, &FakeTiming::default()).unwrap_err();
    assert!(e.to_string().contains("its own save path"), "{e}");
    // The same shard again is a resume, not a conflict.
    assert_eq!(tune::tune_with(&[cpu()], &a, &FakeTiming::default()).unwrap().tuned_now, 0);
}

#[test]
fn sampled_reference_and_column_major_scales_still_catch_wrong_results() {
    let tmp = tempfile::tempdir().unwrap();
    let broken = CpuBackend::new().candidate_configs()[3].clone();
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { broken: Some(broken.clone()), ..LyingBackend::honest() });
    let mut o = opts(vec![tune::parse_shape("640,384").unwrap()], tmp.path(), &[3, 37]);
    o.full_reference_macs = 1.0; // always sample: 16 rows (first and last included) x 4 column blocks
    o.scale_layout = blockfp8::ScaleLayout::ColumnMajor;
    let t = FakeTiming { forced: [(broken.short(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(&[backend], &o, &t).unwrap();
    for rec in &r.records {
        assert!(rec.sampled_check && rec.scale_layout == "column_major");
        assert!(rec.calc_diff < 1e-4, "correct paths agree with the sampled reference: {rec:?}");
        assert_ne!(rec.config, broken);
        assert!(rec.rejected.iter().any(|x| x.config == broken.short() && x.reason.contains("calc_diff")), "{:?}", rec.rejected);
    }
}

/// One config looks fastest when first timed and slow when timed again (noise, a clock
/// boost): the confirmation round must keep the default path.
struct LuckyOnce {
    lucky: String,
    timed: Mutex<HashMap<(String, usize), usize>>,
}

impl Measure for LuckyOnce {
    fn measure(&self, _b: &dyn Backend, p: &GemmProblem, path: &GemmPath, _o: &TimingOptions) -> Result<Vec<f64>> {
        let l = label(path);
        let mut timed = self.timed.lock().unwrap();
        let count = timed.entry((l.clone(), p.shape.m)).or_default();
        *count += 1;
        let t = match (l == self.lucky, *count) {
            (true, 1) => 1e-7,
            (true, _) => 1e-3,
            _ if l == "default" => 1e-5,
            _ => 2e-5,
        };
        Ok(vec![t])
    }
}

#[test]
fn a_winner_that_does_not_win_again_is_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let lucky = CpuBackend::new().candidate_configs()[5].short();
    let m = LuckyOnce { lucky: lucky.clone(), timed: Mutex::new(HashMap::new()) };
    let r = tune::tune_with(&[cpu()], &opts(vec![tune::parse_shape("256,256").unwrap()], tmp.path(), &[1, 8]), &m).unwrap();
    for rec in &r.records {
        assert_eq!(rec.choice, Choice::KernelDefault, "{rec:?}");
        assert_eq!(rec.config, CpuBackend::new().default_config());
        assert_eq!(rec.time_us, rec.default_time_us);
        assert_eq!(m.timed.lock().unwrap()[&(lucky.clone(), rec.m)], 2, "the winner was timed a second time");
    }
    // A genuinely faster config is confirmed and reported with its second timing.
    let steady = FakeTiming { forced: [(lucky.clone(), 1e-7)].into(), ..Default::default() };
    let r = tune::tune_with(&[cpu()], &opts(vec![tune::parse_shape("256,256").unwrap()], &tmp.path().join("b"), &[1]), &steady).unwrap();
    assert_eq!(r.records[0].config.short(), lucky);
}

/// One candidate takes far longer than the rest (a kernel that hangs, shortened here).
struct OneSlow {
    slow: String,
    sleep: std::time::Duration,
}

impl Measure for OneSlow {
    fn measure(&self, _b: &dyn Backend, _p: &GemmProblem, path: &GemmPath, _o: &TimingOptions) -> Result<Vec<f64>> {
        if label(path) == self.slow {
            std::thread::sleep(self.sleep);
        }
        Ok(vec![1e-5])
    }
}

#[test]
fn a_step_past_the_stall_warning_is_reported_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = CpuBackend::new().candidate_configs()[3].short();
    let m = OneSlow { slow: slow.clone(), sleep: std::time::Duration::from_millis(1500) };
    let mut o = opts(vec![tune::parse_shape("256,256").unwrap()], tmp.path(), &[1, 8]);
    o.stall_warning = std::time::Duration::from_millis(500);
    let r = tune::tune_with(&[cpu()], &o, &m).unwrap();
    // Once per item (M = 1 and 8), naming the worker, the item and the candidate. (Other
    // steps of a loaded machine may pass the short warning too; they are not counted.)
    let named: Vec<&String> = r.stalls.iter().filter(|s| s.contains(&format!("candidate {slow},"))).collect();
    assert_eq!(named.len(), 2, "{:?}", r.stalls);
    for (s, m) in named.iter().zip(["M=1", "M=8"]) {
        assert!(s.starts_with("worker 0: N=256 K=256 ") && s.contains(m) && s.contains(&format!("candidate {slow}, running for")), "{s}");
    }
    // The run still finishes every item, and a warning long enough reports nothing.
    assert_eq!(r.records.len(), 2);
    let mut o = opts(vec![tune::parse_shape("256,256").unwrap()], &tmp.path().join("b"), &[1]);
    o.stall_warning = std::time::Duration::from_secs(30);
    assert!(tune::tune_with(&[cpu()], &o, &m).unwrap().stalls.is_empty());
}

#[test]
fn excluded_configs_never_run_and_unknown_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let fast = CpuBackend::new().candidate_configs()[2].short();
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    // Not excluded, the fastest config wins every item.
    let m = FakeTiming { forced: [(fast.clone(), 1e-9)].into(), ..Default::default() };
    let whole = tune::tune_with(&[cpu()], &opts(shapes.clone(), &tmp.path().join("a"), &[1, 16]), &m).unwrap();
    assert!(whole.records.iter().all(|rec| rec.config.short() == fast), "{:?}", whole.records);
    // Excluded, it is never timed, and each item lists it among the skipped.
    let m = FakeTiming { forced: [(fast.clone(), 1e-9)].into(), ..Default::default() };
    let mut o = opts(shapes.clone(), &tmp.path().join("b"), &[1, 16]);
    o.exclude = vec![fast.clone()];
    let r = tune::tune_with(&[cpu()], &o, &m).unwrap();
    assert!(!m.timed.lock().unwrap().contains(&fast));
    assert!(m.timed.lock().unwrap().len() > 2, "the other candidates still ran");
    for (rec, before) in r.records.iter().zip(&whole.records) {
        assert_ne!(rec.config.short(), fast);
        assert_eq!((rec.skipped, rec.candidates), (before.skipped + 1, before.candidates - 1));
    }
    // A name no candidate has is refused before anything is written.
    let mut o = opts(shapes, &tmp.path().join("c"), &[1]);
    o.exclude = vec![fast, "m128n128k128g8w8s99".into()];
    let e = tune::tune_with(&[cpu()], &o, &FakeTiming::default()).unwrap_err().to_string();
    assert!(e.contains("--exclude-config m128n128k128g8w8s99"), "{e}");
    assert!(!tmp.path().join("c").exists());
}

const CHILD_DIR_ENV: &str = "BLOCKFP8_TUNE_TEST_CHILD_DIR";

/// Run only as a child of `a_sigkilled_process_resumes`: a slow tune into the given folder.
#[test]
#[ignore = "spawned by a_sigkilled_process_resumes"]
fn child_slow_tune() {
    let dir = std::env::var(CHILD_DIR_ENV).unwrap_or_else(|_| panic!("run only as the child of a_sigkilled_process_resumes ({CHILD_DIR_ENV} unset)"));
    let slow = FakeTiming { sleep_ms: 15, ..Default::default() };
    tune::tune_with(&[cpu()], &opts(small_shapes(), Path::new(&dir), &MS), &slow).unwrap();
}

#[test]
fn a_sigkilled_process_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("killed");
    let o = opts(small_shapes(), &dir, &MS);
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["child_slow_tune", "--exact", "--ignored", "--test-threads=1"])
        .env(CHILD_DIR_ENV, &dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = || std::fs::read_to_string(o.journal_path()).map(|t| t.lines().count()).unwrap_or(0);
    let start = std::time::Instant::now();
    while lines() < 3 {
        assert!(start.elapsed().as_secs() < 120, "child made no progress");
        assert!(child.try_wait().unwrap().is_none(), "child finished before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup runs
    child.wait().unwrap();
    let done = tune::read_journal(&o.journal_path()).unwrap();
    assert!(done.len() >= 3 && done.len() < 3 * MS.len(), "{} items done at the kill", done.len());

    let counting = FakeTiming::default();
    let r = tune::tune_with(&[cpu()], &o, &counting).unwrap();
    assert_eq!((r.resumed, r.tuned_now), (done.len(), 3 * MS.len() - done.len()));
    let redone: Vec<_> = done.iter().filter(|d| counting.seen.lock().unwrap().contains(&(d.n, d.k, d.m))).collect();
    assert!(redone.is_empty(), "measured again after the kill: {redone:?}");
    let single = tmp.path().join("single");
    tune::tune_with(&[cpu()], &opts(small_shapes(), &single, &MS), &FakeTiming::default()).unwrap();
    assert_eq!(config_files(&dir), config_files(&single));
}

/// A cluster candidate (CUDA's multicast pairs) may win a blockfp8 file, which then names the
/// cluster; files for vLLM never pick it, since vLLM's launcher rejects the key.
#[test]
fn cluster_candidates_win_only_files_for_blockfp8() {
    let tmp = tempfile::tempdir().unwrap();
    let mut pair = CpuBackend::new().candidate_configs()[0].clone();
    pair.extra.insert(CLUSTER_KEY.into(), 2.into());
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { extra: vec![pair.clone()], ..LyingBackend::honest() });
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    let t = FakeTiming { forced: [(pair.short(), 1e-9)].into(), ..Default::default() };
    let dir = tmp.path().join("own");
    let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &dir, &[1, 16]), &t).unwrap();
    assert!(r.records.iter().all(|rec| rec.config == pair), "{:?}", r.records.iter().map(|r| r.config.short()).collect::<Vec<_>>());
    for (name, text) in config_files(&dir) {
        let table = ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(table.nearest(16).unwrap().1.cluster(), 2, "{name}: {text}");
    }
    let shape = GemmShape { m: 16, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
    assert!(tune::candidate_configs(backend.as_ref(), &shape, true, &[]).0.contains(&pair));
    let (keep, skipped) = tune::candidate_configs(backend.as_ref(), &shape, false, &[]);
    assert!(!keep.contains(&pair) && skipped.iter().any(|r| r.config == pair.short() && r.reason.contains("--vllm-compatible")), "{skipped:?}");
    let mut compat = opts(shapes, &tmp.path().join("vllm"), &[1, 16]);
    compat.blockfp8_keys = false;
    let r = tune::tune_with(std::slice::from_ref(&backend), &compat, &t).unwrap();
    for rec in &r.records {
        // Skipped (counted), not timed and rejected.
        assert!(rec.config != pair && rec.config.extra.is_empty(), "{}", rec.config.short());
        assert!(rec.skipped >= 1 && rec.rejected.iter().all(|x| x.config != pair.short()));
    }
}

/// Entries written for this crate carry what the backend chose by rule (its pinned K split),
/// for the kernel default and tuned winners alike; vLLM files and vendor entries do not.
#[test]
fn winners_are_written_with_the_backends_pinned_choices() {
    let tmp = tempfile::tempdir().unwrap();
    let backend: Arc<dyn Backend> = Arc::new(LyingBackend { pin_split: Some(3), ..LyingBackend::honest() });
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    let fast = CpuBackend::new().candidate_configs()[2].clone();
    let split = |c: &KernelConfig| c.extra.get("SPLIT_K").and_then(|v| v.as_u64());
    for (forced, tag) in [(fast.short(), "tuned"), ("default".to_string(), "default")] {
        let t = FakeTiming { forced: [(forced, 1e-9)].into(), ..Default::default() };
        let dir = tmp.path().join(tag);
        let r = tune::tune_with(std::slice::from_ref(&backend), &opts(shapes.clone(), &dir, &[1, 16]), &t).unwrap();
        for rec in &r.records {
            assert_eq!(split(&rec.config), Some(3), "{tag} M={}: {}", rec.m, rec.config.short());
        }
        for (name, text) in config_files(&dir) {
            let table = ConfigTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(split(table.nearest(1).unwrap().1), Some(3), "{name}: {text}");
        }
        let mut compat = opts(shapes.clone(), &tmp.path().join(format!("{tag}-vllm")), &[1, 16]);
        compat.blockfp8_keys = false;
        let r = tune::tune_with(std::slice::from_ref(&backend), &compat, &t).unwrap();
        assert!(r.records.iter().all(|rec| rec.config.extra.is_empty()), "vLLM files carry no blockfp8 keys");
    }
    // A vendor winner keeps the fastest kernel's fields as they were timed, unpinned.
    let vendor: Arc<dyn Backend> = Arc::new(LyingBackend { vendor: true, pin_split: Some(3), ..LyingBackend::honest() });
    let t = FakeTiming { forced: [("vendor".to_string(), 1e-9)].into(), ..Default::default() };
    let r = tune::tune_with(std::slice::from_ref(&vendor), &opts(shapes, &tmp.path().join("v"), &[1, 16]), &t).unwrap();
    assert!(r.records.iter().all(|rec| rec.config.prefers_vendor() && split(&rec.config).is_none()));
}

/// Journal records are checked as they are read: an edited record (an impossible tile, a
/// negative time, a calc_diff out of range) is dropped with a warning and its item tuned again,
/// instead of landing in a config file `config check` rejects or a negative speedup.
#[test]
fn invalid_journal_records_are_dropped_and_retuned() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let shapes = vec![tune::parse_shape("256,256").unwrap()];
    let o = opts(shapes.clone(), &dir, &[1, 16, 48, 96]);
    tune::tune_with(&[cpu()], &o, &FakeTiming::default()).unwrap();
    let want = config_files(&dir);
    let text = std::fs::read_to_string(o.journal_path()).unwrap();
    let mut lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    lines[0]["config"]["BLOCK_SIZE_M"] = 48.into(); // not a power of two
    lines[1]["time_us"] = (-3.0).into();
    lines[2]["calc_diff"] = 5.0.into(); // calc_diff lies in [0, 2]
    let edited: String = lines.iter().map(|v| v.to_string() + "\n").collect();
    std::fs::write(o.journal_path(), edited).unwrap();
    for (i, v) in lines.iter().enumerate() {
        let r: tune::TuneRecord = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(tune::check_record(&r).is_ok(), i == 3, "record {i}: {:?}", tune::check_record(&r));
    }
    let counting = FakeTiming::default();
    let r = tune::tune_with(&[cpu()], &o, &counting).unwrap();
    assert_eq!((r.resumed, r.tuned_now), (1, 3));
    let retuned: BTreeSet<usize> = counting.seen.lock().unwrap().iter().map(|&(_, _, m)| m).collect();
    assert_eq!(retuned, [1, 16, 48].into());
    assert!(r.records.iter().all(|rec| rec.time_us > 0.0 && rec.speedup() > 0.0));
    assert_eq!(config_files(&dir), want, "the rewritten file equals the first run's");
    for (name, _) in config_files(&dir) {
        let checked = blockfp8::config::library::check_file(&dir.join(&name), &name);
        assert!(checked.is_ok(), "{name}: {checked:?}");
    }
}

/// Tuned files get the mode a plain `File::create` gets (0666 less the umask), not the
/// temporary file's 0600, so that a serving account can read them.
#[cfg(unix)]
#[test]
fn tuned_files_are_readable_like_any_new_file() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    let want = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
    let o = opts(vec![tune::parse_shape("256,256").unwrap()], tmp.path(), &[1]);
    let r = tune::tune_with(&[cpu()], &o, &FakeTiming::default()).unwrap();
    assert_eq!(r.files.len(), 1);
    let got = std::fs::metadata(&r.files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(got, want, "tuned file mode {got:o}, a new file gets {want:o}");
    assert_ne!(got, 0o600, "this test needs a umask that lets others read (e.g. 022)");
    let merged = tmp.path().join("merged");
    let m = tune::merge(&[tmp.path().to_path_buf()], &merged, OnConflict::Error).unwrap();
    for f in m.files {
        assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, want, "{}", f.display());
    }
}
