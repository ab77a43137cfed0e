//! Finds, reads once and caches config files: user folders (env var), then the configs
//! embedded from the crate's `configs/`; a batch-invariant switch ignores them all.
//!
//! Environment:
//! - `BLOCKFP8_CONFIG_DIR`: folder(s) searched first, `:`-separated (`;` on Windows), in
//!   order; the first readable, valid file wins.
//! - `BLOCKFP8_BATCH_INVARIANT=1`: ignore every tuned file, so that the kernel choice (and
//!   so the result bits) do not depend on the batch size (vLLM's `VLLM_BATCH_INVARIANT`).
//!
//! A file is read at most once per `Library` (use [`Library::shared`] for one per process),
//! misses and bad files included. A miss logs one warning per (device, N, K, dtype, block)
//! with the exact places looked at and the command that tunes the shape; a malformed file
//! logs its path and reason and counts as missing.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::naming::{parse_file_name, DenseKey, FileKey};
use super::table::MAX_FILE_BYTES;
use super::ConfigTable;
use crate::device::config_name_for;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_configs.rs"));
}

pub const CONFIG_DIR_ENV: &str = "BLOCKFP8_CONFIG_DIR";
pub const BATCH_INVARIANT_ENV: &str = "BLOCKFP8_BATCH_INVARIANT";

/// (file name, contents) of every `configs/*.json` embedded at build time.
pub fn embedded_configs() -> &'static [(&'static str, &'static str)] {
    embedded::EMBEDDED
}

/// Where a table came from, or where one was looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    File(PathBuf),
    /// A file of the crate's `configs/`, embedded in the binary.
    Embedded(String),
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::File(p) => write!(f, "{}", p.display()),
            ConfigSource::Embedded(name) => write!(f, "embedded:configs/{name}"),
        }
    }
}

/// One place looked at without success, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub place: ConfigSource,
    /// "not found", or why the file was unusable.
    pub problem: String,
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.place, self.problem)
    }
}

/// The outcome of one lookup, with enough detail for `blockfp8 config show`.
#[derive(Clone, Debug)]
pub enum Lookup {
    /// `skipped`: places searched before `source` (missing or bad files).
    Found { table: Arc<ConfigTable>, source: ConfigSource, skipped: Vec<Attempt> },
    Missing { file_name: String, tried: Vec<Attempt> },
    /// `BLOCKFP8_BATCH_INVARIANT` is on: nothing was read.
    BatchInvariant,
}

impl Lookup {
    pub fn table(&self) -> Option<&Arc<ConfigTable>> {
        match self {
            Lookup::Found { table, .. } => Some(table),
            _ => None,
        }
    }
}

type Slot = Arc<OnceLock<Lookup>>;

pub struct Library {
    dirs: Vec<PathBuf>,
    use_embedded: bool,
    /// The shipped configs: the embedded `configs/` unless replaced.
    builtin: &'static [(&'static str, &'static str)],
    batch_invariant: bool,
    /// A miss is what the caller is there to fill or report (the tuner, `config show`):
    /// logged at info, not warned.
    misses_expected: bool,
    /// One slot per key; the slot's OnceLock makes concurrent first lookups of one key wait
    /// for a single read instead of each reading the file.
    cache: Mutex<HashMap<DenseKey, Slot>>,
    warnings: Mutex<Vec<String>>,
    files_read: AtomicUsize,
    batch_invariant_logged: AtomicBool,
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library").field("dirs", &self.dirs).field("use_embedded", &self.use_embedded).field("batch_invariant", &self.batch_invariant).finish()
    }
}

impl Library {
    /// Folders searched in order, then (if `use_embedded`) the embedded configs;
    /// `batch_invariant` ignores them all.
    pub fn new(dirs: Vec<PathBuf>, use_embedded: bool, batch_invariant: bool) -> Self {
        Library {
            dirs,
            use_embedded,
            builtin: embedded_configs(),
            batch_invariant,
            misses_expected: false,
            cache: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
            files_read: AtomicUsize::new(0),
            batch_invariant_logged: AtomicBool::new(false),
        }
    }

    /// Reads the environment (folders and batch-invariant switch) and uses the embedded configs.
    pub fn from_env() -> Self {
        let (dirs, batch_invariant) = settings_from_env_values(std::env::var_os(CONFIG_DIR_ENV).as_deref(), std::env::var_os(BATCH_INVARIANT_ENV).as_deref());
        Library::new(dirs, true, batch_invariant)
    }

    /// `dir` first, then the embedded configs (what `blockfp8 config show --dir DIR` uses).
    pub fn with_dir(dir: impl Into<PathBuf>) -> Self {
        Library::new(vec![dir.into()], true, false)
    }

    /// The same library with `dir` searched before its other folders.
    pub fn prepend_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.insert(0, dir.into());
        self
    }

    /// Replaces the embedded configs with `files` ((file name, contents) pairs), for an
    /// application that ships its own set, and for tests.
    pub fn with_builtin_configs(mut self, files: &'static [(&'static str, &'static str)]) -> Self {
        self.builtin = files;
        self
    }

    /// The same library, logging a missing file at info level and keeping it out of
    /// [`Library::warnings`]: for the tuner, which reads what a plan serves now for the
    /// very shapes it is writing files for, and for commands whose answer a miss is (`config
    /// show`, `config shapes`). Bad files still warn.
    pub fn expecting_misses(mut self) -> Self {
        self.misses_expected = true;
        self
    }

    /// One library per process, from the environment at first use.
    pub fn shared() -> Arc<Library> {
        static SHARED: OnceLock<Arc<Library>> = OnceLock::new();
        SHARED.get_or_init(|| Arc::new(Library::from_env())).clone()
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
    pub fn uses_embedded(&self) -> bool {
        self.use_embedded
    }
    pub fn batch_invariant(&self) -> bool {
        self.batch_invariant
    }

    /// The table for (device config name, N, K, dtype, block), read once per library.
    pub fn lookup(&self, device: &str, n: usize, k: usize, dtype: &str, block: (usize, usize)) -> Option<Arc<ConfigTable>> {
        if self.batch_invariant {
            self.note_batch_invariant();
            return None;
        }
        let key = key_for(device, n, k, dtype, block);
        self.slot(&key).get_or_init(|| self.resolve(&key)).table().cloned()
    }

    /// Like [`Library::lookup`], with where the table came from or every place tried.
    pub fn lookup_verbose(&self, device: &str, n: usize, k: usize, dtype: &str, block: (usize, usize)) -> Lookup {
        if self.batch_invariant {
            self.note_batch_invariant();
            return Lookup::BatchInvariant;
        }
        let key = key_for(device, n, k, dtype, block);
        self.slot(&key).get_or_init(|| self.resolve(&key)).clone()
    }

    /// Every warning this library has logged, in order (misses and bad files).
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many files this library has read as text (each at most once; files rejected
    /// before reading, by size or kind, are not counted).
    pub fn files_read(&self) -> usize {
        self.files_read.load(Ordering::Relaxed)
    }

    fn slot(&self, key: &DenseKey) -> Slot {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.entry(key.clone()).or_default().clone()
    }

    fn warn(&self, msg: String) {
        log::warn!("{msg}");
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(msg);
    }

    fn note_batch_invariant(&self) {
        if !self.batch_invariant_logged.swap(true, Ordering::Relaxed) {
            log::info!("{BATCH_INVARIANT_ENV} is set: tuned configs are ignored and every batch size uses the default path");
        }
    }

    /// Searches every place once; runs at most once per key.
    fn resolve(&self, key: &DenseKey) -> Lookup {
        let file_name = key.file_name();
        let mut tried = Vec::new();
        // The device part is already a plain name; a dtype with a separator must not turn
        // the file name into a path that leaves the folder.
        if file_name.contains(['/', '\\', '\0']) {
            self.warn(format!("no tuned config for {key}: dtype {:?} cannot be part of a file name", key.dtype));
            return Lookup::Missing { file_name, tried };
        }
        for dir in &self.dirs {
            let path = dir.join(&file_name);
            let place = ConfigSource::File(path.clone());
            match read_config_file(&path) {
                Ok(None) => tried.push(Attempt { place, problem: "not found".into() }),
                Ok(Some(text)) => {
                    self.files_read.fetch_add(1, Ordering::Relaxed);
                    match parse_for_key(&text, key) {
                        Ok((table, warnings)) => {
                            warnings.into_iter().for_each(|w| self.warn(format!("{place}: {w}")));
                            return Lookup::Found { table: Arc::new(table), source: place, skipped: tried };
                        }
                        Err(reason) => tried.push(self.bad_file(place, reason)),
                    }
                }
                Err(reason) => tried.push(self.bad_file(place, reason)),
            }
        }
        if self.use_embedded {
            let place = ConfigSource::Embedded(file_name.clone());
            match self.builtin.iter().find(|(name, _)| *name == file_name) {
                Some((_, text)) => match parse_for_key(text, key) {
                    Ok((table, warnings)) => {
                        warnings.into_iter().for_each(|w| self.warn(format!("{place}: {w}")));
                        return Lookup::Found { table: Arc::new(table), source: place, skipped: tried };
                    }
                    Err(reason) => tried.push(self.bad_file(place, reason)),
                },
                None => tried.push(Attempt { place, problem: "not shipped with this build".into() }),
            }
        }
        let places = if tried.is_empty() { "nowhere (no folders configured and embedded configs off)".to_string() } else { tried.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ") };
        if self.misses_expected {
            log::info!("no tuned config for {key} yet: looked for {places}");
            return Lookup::Missing { file_name, tried };
        }
        let shape = super::shape_arg(key.n, key.k, key.block);
        self.warn(format!(
            "Using the default W8A8 block FP8 path; performance might be sub-optimal! No tuned config for {key}: looked for {places}. \
             Tune it with `blockfp8 tune --shape {shape} --save-path DIR` and set {CONFIG_DIR_ENV}=DIR"
        ));
        Lookup::Missing { file_name, tried }
    }

    fn bad_file(&self, place: ConfigSource, reason: String) -> Attempt {
        self.warn(format!("ignoring tuned config {place}: {reason}"));
        Attempt { place, problem: reason }
    }
}

fn key_for(device: &str, n: usize, k: usize, dtype: &str, block: (usize, usize)) -> DenseKey {
    DenseKey { n, k, device: config_name_for(device), dtype: dtype.to_string(), block }
}

fn parse_for_key(text: &str, key: &DenseKey) -> Result<(ConfigTable, Vec<String>), String> {
    let table = ConfigTable::parse(text)?;
    table.check_block(key.block)?;
    drop_foreign_predictions(table, &key.device)
}

/// Drops predicted entries modeled for another architecture than `device`'s, with one
/// warning each (a prediction is only as good as the model of the machine it assumed).
/// Err when nothing is left, so the lookup falls back to the default path.
pub fn drop_foreign_predictions(table: ConfigTable, device: &str) -> Result<(ConfigTable, Vec<String>), String> {
    let Some(arch) = super::naming::amd_arch_for_config_name(device) else {
        let mut warnings = Vec::new();
        if table.entries.iter().any(|(_, c)| c.predicted_for().is_some()) {
            warnings.push(format!("predicted entries in a file for {device}, which is not an AMD device this crate models; using them as written"));
        }
        return Ok((table, warnings));
    };
    let (mut kept, mut warnings) = (Vec::new(), Vec::new());
    for (m, cfg) in table.entries {
        match cfg.predicted_for() {
            Some(p) if p != arch => warnings.push(format!("ignoring the entry for M={m}: it was predicted for {p}, but the file is for {device} ({arch})")),
            _ => kept.push((m, cfg)),
        }
    }
    if kept.is_empty() {
        return Err(format!("every entry was predicted for another architecture than {device} ({arch}): {}", warnings.join("; ")));
    }
    Ok((ConfigTable::from_entries(kept)?, warnings))
}

/// `Ok(None)` when absent; an error for anything that is not a readable regular UTF-8 file
/// within the size limit (checked before reading, so a huge file or a device is not read).
fn read_config_file(path: &Path) -> Result<Option<String>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES as u64 {
        return Err(format!("file is {} bytes, more than the {MAX_FILE_BYTES}-byte limit", meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    // The file may grow between stat and read: never read past the limit.
    file.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!("file is more than the {MAX_FILE_BYTES}-byte limit"));
    }
    String::from_utf8(bytes).map(Some).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// (folders, batch invariant) from the values of `BLOCKFP8_CONFIG_DIR` and
/// `BLOCKFP8_BATCH_INVARIANT`; a pure function so that it can be tested without touching
/// the process environment.
pub fn settings_from_env_values(config_dir: Option<&OsStr>, batch_invariant: Option<&OsStr>) -> (Vec<PathBuf>, bool) {
    let dirs = config_dir.map(|v| std::env::split_paths(v).filter(|p| !p.as_os_str().is_empty()).collect()).unwrap_or_default();
    let bi = match batch_invariant {
        None => false,
        Some(v) => {
            let text = v.to_string_lossy();
            parse_flag(&text).unwrap_or_else(|| {
                log::warn!("{BATCH_INVARIANT_ENV}={text:?} is not a recognised value (1/0, true/false, yes/no, on/off); treating it as off");
                false
            })
        }
    };
    (dirs, bi)
}

/// 1/true/yes/on -> true, 0/false/no/off/empty -> false (case-insensitive); other integers
/// are true when non-zero, as vLLM's `bool(int(value))`.
pub fn parse_flag(v: &str) -> Option<bool> {
    let t = v.trim().to_ascii_lowercase();
    match t.as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "" | "0" | "false" | "no" | "off" => Some(false),
        _ => t.parse::<i64>().ok().map(|i| i != 0),
    }
}

/// What `config check` reports for a valid file.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigSummary {
    pub key: FileKey,
    pub entries: usize,
    pub m_min: usize,
    pub m_max: usize,
}

impl fmt::Display for ConfigSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.key {
            FileKey::Dense(_) => "dense",
            FileKey::Moe(_) => "moe",
        };
        write!(f, "{kind}, {} entries, M {}..={}", self.entries, self.m_min, self.m_max)
    }
}

/// Validates every `*.json` file of `dir` (other files are not configs and are skipped):
/// its name must be a canonical dense or MoE name, its content a valid table, and a dense
/// table's BLOCK_SIZE_K must divide the name's block K. Sorted by path. An unreadable
/// folder gives one entry for the folder itself.
pub fn check_dir(dir: &Path) -> Vec<(PathBuf, Result<ConfigSummary, String>)> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => return vec![(dir.to_path_buf(), Err(format!("cannot read folder: {e}")))],
    };
    let mut out = Vec::new();
    for entry in rd {
        let path = match entry {
            Ok(e) => e.path(),
            Err(e) => {
                out.push((dir.to_path_buf(), Err(format!("cannot list folder: {e}"))));
                continue;
            }
        };
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else { continue };
        if !name.ends_with(".json") || path.is_dir() {
            continue;
        }
        let result = check_file(&path, &name);
        out.push((path, result));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// [`check_dir`]'s checks for one file (`name`: its file name).
pub fn check_file(path: &Path, name: &str) -> Result<ConfigSummary, String> {
    let key = parse_file_name(name).ok_or_else(|| bad_name_reason(name))?;
    let text = read_config_file(path)?.ok_or_else(|| "vanished while checking".to_string())?;
    let table = ConfigTable::parse(&text)?;
    if let FileKey::Dense(k) = &key {
        table.check_block(k.block)?;
    }
    let (m_min, m_max) = table.m_range().unwrap_or((0, 0));
    Ok(ConfigSummary { key, entries: table.entries.len(), m_min, m_max })
}

fn bad_name_reason(name: &str) -> String {
    let despaced = name.replace(' ', "");
    if let Some(key) = parse_file_name(&despaced) {
        let canonical = match key {
            FileKey::Dense(k) => k.file_name(),
            FileKey::Moe(k) => k.file_name(),
        };
        return format!("file name has spaces; it is never looked up (the name looked up is {canonical:?})");
    }
    "file name is not a config name: expected N={N},K={K},device_name={DEVICE},dtype={DTYPE},block_shape=[{bn},{bk}].json \
     or E={E},N={N},device_name={DEVICE}[,dtype={DTYPE}][,block_shape=[{bn},{bk}]].json"
        .into()
}

#[cfg(test)]
mod predicted_tests {
    use super::*;

    fn lib() -> Library {
        Library::new(vec![PathBuf::from("tests/data/configs/amd-predicted")], false, false)
    }

    #[test]
    fn predictions_for_another_architecture_are_dropped_with_a_warning() {
        let lib = lib();
        let t = lib.lookup("AMD_Instinct_MI355X", 4096, 7168, "fp8_w8a8", (128, 128)).expect("the gfx950 entry remains");
        assert_eq!(t.entries.len(), 1);
        let (m, cfg) = &t.entries[0];
        assert_eq!((*m, cfg.predicted_for(), cfg.is_predicted()), (64, Some("gfx950"), true));
        let w = lib.warnings();
        assert_eq!(w.iter().filter(|w| w.contains("predicted for gfx942") && w.contains("AMD_Instinct_MI355X (gfx950)")).count(), 2, "{w:?}");
        // A file of only foreign predictions is refused as a whole: the default path runs.
        assert!(lib.lookup("AMD_Instinct_MI355X", 7168, 2048, "fp8_w8a8", (128, 128)).is_none());
        assert!(lib.warnings().iter().any(|w| w.contains("every entry was predicted for another architecture")));
    }

    #[test]
    fn predicted_key_is_validated_and_blockfp8_only() {
        let ok = r#"{"1": {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4, "blockfp8_source": "predicted", "blockfp8_predicted_for": "gfx942"}}"#;
        let t = ConfigTable::parse(ok).unwrap();
        let cfg = &t.entries[0].1;
        assert!(cfg.is_predicted() && cfg.is_blockfp8_only());
        let note = cfg.provenance_note().unwrap();
        assert!(note.contains("predicted") && note.contains("gfx942") && note.contains("blockfp8 tune"), "{note}");
        for (bad, why) in [
            (ok.replace("\"predicted\"", "\"guessed\""), "blockfp8_source"),
            (ok.replace("\"gfx942\"", "\"sm_90\""), "blockfp8_predicted_for"),
            (ok.replace("\"blockfp8_source\": \"predicted\", ", ""), "without blockfp8_source"),
        ] {
            let e = ConfigTable::parse(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // A measured entry has no note and no predicted flag.
        let measured = ConfigTable::parse(r#"{"1": {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4}}"#).unwrap();
        assert!(measured.entries[0].1.provenance_note().is_none() && !measured.entries[0].1.is_blockfp8_only());
    }

    #[test]
    fn amd_config_names_map_to_architectures() {
        use crate::config::naming::amd_arch_for_config_name as arch;
        assert_eq!(arch("AMD_Instinct_MI300X"), Some("gfx942"));
        assert_eq!(arch("AMD_Instinct_MI325X"), Some("gfx942"));
        assert_eq!(arch("AMD_Instinct_MI325_OAM"), Some("gfx942"));
        assert_eq!(arch("AMD_Instinct_MI308X"), Some("gfx942"));
        assert_eq!(arch("AMD_Instinct_MI355X"), Some("gfx950"));
        assert_eq!(arch("AMD_Instinct_MI350X"), Some("gfx950"));
        assert_eq!(arch("NVIDIA_H200"), None);
    }
}

#[cfg(test)]
mod block_k_tests {
    use super::*;

    /// BLOCK_SIZE_K 256 spans two 128-wide scale blocks: only in entries vLLM never reads.
    #[test]
    fn block_k_may_span_scale_blocks_only_in_blockfp8_entries() {
        let vllm = r#"{"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 256, "GROUP_SIZE_M": 1, "num_warps": 4}}"#;
        let e = ConfigTable::parse(vllm).unwrap().check_block((128, 128)).unwrap_err();
        assert!(e.contains("BLOCK_SIZE_K 256"), "{e}");
        let ours = vllm.replace("\"num_warps\": 4", "\"num_warps\": 4, \"blockfp8_source\": \"predicted\"");
        ConfigTable::parse(&ours).unwrap().check_block((128, 128)).unwrap();
        let odd = ours.replace("256", "192");
        assert!(ConfigTable::parse(&odd).map(|t| t.check_block((128, 128)).is_err()).unwrap_or(true));
    }
}
