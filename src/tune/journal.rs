//! The append-only journal that makes a tuning run resumable: one JSON line per finished
//! (shape, M), written by a single writer and fsync'd before the item counts as done. A run
//! killed at any point leaves at worst a torn last line, which the next run ignores.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::KernelConfig;
use crate::error::{Error, Result};

use super::plan::WorkItem;

/// File names of journals start with this; `merge` reads every `tune-journal*.jsonl`.
pub const JOURNAL_PREFIX: &str = "tune-journal";

/// Which implementation won an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// A kernel config from the candidate set.
    Tuned,
    /// The vendor BLAS path (rocBLAS / cuBLASLt); the entry carries `PATH_KEY: "vendor"`.
    Vendor,
    /// The kernel's default config.
    KernelDefault,
}

impl Choice {
    pub fn label(self) -> &'static str {
        match self {
            Choice::Tuned => "tuned",
            Choice::Vendor => "vendor",
            Choice::KernelDefault => "kernel default",
        }
    }
}

/// A candidate that ran but was not allowed to win.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rejected {
    pub config: String,
    pub reason: String,
}

/// The outcome of one (shape, M).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneRecord {
    /// Device config name (`NVIDIA_H200`, `AMD_Instinct_MI300X`, ...).
    pub device: String,
    /// File dtype tag, `fp8_w8a8`.
    pub dtype: String,
    pub out_dtype: String,
    pub scale_layout: String,
    pub n: usize,
    pub k: usize,
    pub block: (usize, usize),
    pub m: usize,
    pub choice: Choice,
    /// The entry as written to the config file.
    pub config: KernelConfig,
    /// Median time of the winner, microseconds.
    pub time_us: f64,
    /// The path used without a tuned file (vendor if it can run the shape, else the kernel default).
    pub default_path: Choice,
    pub default_time_us: f64,
    pub vendor_time_us: Option<f64>,
    pub kernel_default_time_us: Option<f64>,
    /// calc_diff of the winner against the CPU reference.
    pub calc_diff: f64,
    /// Whether the reference covered a sample of the output (large shapes) or all of it.
    pub sampled_check: bool,
    /// Kernel configs timed.
    pub candidates: usize,
    /// Kernel configs filtered out before launch (block_k divisibility, device limits).
    pub skipped: usize,
    pub rejected: Vec<Rejected>,
    /// Which worker (device ordinal) measured it.
    pub worker: usize,
    /// Wall time spent on the item, seconds.
    pub seconds: f64,
}

impl TuneRecord {
    pub fn item(&self) -> WorkItem {
        WorkItem { n: self.n, k: self.k, block: self.block, m: self.m }
    }
    /// Speedup of the winner over the default path.
    pub fn speedup(&self) -> f64 {
        self.default_time_us / self.time_us
    }
    /// Records with equal keys describe the same measurement target.
    pub fn key(&self) -> RecordKey {
        RecordKey {
            device: self.device.clone(),
            dtype: self.dtype.clone(),
            out_dtype: self.out_dtype.clone(),
            scale_layout: self.scale_layout.clone(),
            item: self.item(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKey {
    pub device: String,
    pub dtype: String,
    pub out_dtype: String,
    pub scale_layout: String,
    pub item: WorkItem,
}

/// An open journal; `append` is durable when it returns.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (creating) the journal at `path`. With `resume`, returns the records already
    /// there; without, truncates it.
    pub fn open(path: &Path, resume: bool) -> Result<(Journal, Vec<TuneRecord>)> {
        let ctx = || format!("opening tuning journal {}", path.display());
        let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(|e| Error::io(ctx(), e))?;
        let mut records = Vec::new();
        if resume {
            let mut text = String::new();
            file.read_to_string(&mut text).map_err(|e| Error::io(ctx(), e))?;
            records = parse_journal_text(&text, path);
            // A torn last line (killed mid-write) must not glue onto the next record.
            if !text.is_empty() && !text.ends_with('\n') {
                file.write_all(b"\n").map_err(|e| Error::io(ctx(), e))?;
            }
        } else {
            file.set_len(0).map_err(|e| Error::io(ctx(), e))?;
            file.seek(SeekFrom::Start(0)).map_err(|e| Error::io(ctx(), e))?;
        }
        Ok((Journal { path: path.to_path_buf(), file }, records))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one record as one line and fsyncs it.
    pub fn append(&mut self, rec: &TuneRecord) -> Result<()> {
        let mut line = serde_json::to_vec(rec).map_err(|e| Error::io("serializing a tuning record", std::io::Error::other(e)))?;
        line.push(b'\n');
        let ctx = || format!("appending to tuning journal {}", self.path.display());
        self.file.write_all(&line).map_err(|e| Error::io(ctx(), e))?;
        self.file.sync_data().map_err(|e| Error::io(ctx(), e))
    }
}

/// What the tuner itself could have written: sizes within the kernels' limits, a config a
/// file can hold (BLOCK_SIZE_K dividing the weight block for a tuned kernel), positive finite
/// times, a finite calc_diff. A record failing this was edited or corrupted; trusting it
/// would put an impossible entry into a config file or report a negative speedup.
pub fn check_record(r: &TuneRecord) -> std::result::Result<(), String> {
    let shape = crate::gemm::GemmShape { m: r.m, n: r.n, k: r.k, block: r.block, format: crate::Fp8Format::E4m3fn, out_dtype: crate::gemm::OutDtype::F32 };
    shape.check_size("journal").map_err(|e| e.to_string())?;
    r.config.validate().map_err(|why| format!("config {}: {why}", r.config.short()))?;
    if r.choice == Choice::Tuned && r.block.1 % r.config.block_k as usize != 0 {
        return Err(format!("BLOCK_SIZE_K {} does not divide the weight block_k {}", r.config.block_k, r.block.1));
    }
    let times = [("time_us", Some(r.time_us)), ("default_time_us", Some(r.default_time_us)), ("vendor_time_us", r.vendor_time_us), ("kernel_default_time_us", r.kernel_default_time_us)];
    for (what, t) in times {
        if let Some(t) = t.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return Err(format!("{what} = {t} is not a positive time"));
        }
    }
    // calc_diff lies in [0, 2]; rounding can take an exact match a hair below 0.
    if !(r.calc_diff.is_finite() && (-1e-12..=2.0).contains(&r.calc_diff)) {
        return Err(format!("calc_diff = {} outside [0, 2]", r.calc_diff));
    }
    if !(r.seconds.is_finite() && r.seconds >= 0.0) {
        return Err(format!("seconds = {} is not a duration", r.seconds));
    }
    Ok(())
}

/// Parses journal lines; unreadable lines (a torn tail) and records that fail
/// [`check_record`] are skipped with a warning (their items are tuned again).
pub fn parse_journal_text(text: &str, path: &Path) -> Vec<TuneRecord> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TuneRecord>(line) {
            Ok(r) => match check_record(&r) {
                Ok(()) => out.push(r),
                Err(why) => log::warn!("{}:{}: dropping invalid journal record N={} K={} M={} ({why})", path.display(), i + 1, r.n, r.k, r.m),
            },
            Err(e) => log::warn!("{}:{}: skipping unreadable journal line ({e})", path.display(), i + 1),
        }
    }
    out
}

/// Reads a journal file without opening it for writing.
pub fn read_journal(path: &Path) -> Result<Vec<TuneRecord>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading tuning journal {}", path.display()), e))?;
    Ok(parse_journal_text(&text, path))
}
