//! Config files out of tuning records: written atomically, and merged across shards.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::{dense_file_name, ConfigTable, KernelConfig};
use crate::error::{Error, Result};

use super::journal::{read_journal, RecordKey, TuneRecord, JOURNAL_PREFIX};

/// The config file name of a record's shape.
pub fn file_name_of(rec: &TuneRecord) -> String {
    dense_file_name(rec.n, rec.k, &rec.device, &rec.dtype, rec.block)
}

/// vLLM's layout (keys ascending by M, 4-space indent, trailing newline), written by the
/// config library so that tuner output and shipped files are byte-compatible.
pub fn table_json(entries: &BTreeMap<usize, KernelConfig>) -> String {
    ConfigTable { entries: entries.iter().map(|(m, c)| (*m, c.clone())).collect() }.to_json()
}

/// Reads a config file into M -> entry, with the config library's parser and checks.
pub fn read_table(path: &Path) -> Result<BTreeMap<usize, KernelConfig>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading config file {}", path.display()), e))?;
    let table = ConfigTable::parse(&text).map_err(|reason| Error::Config { path: path.to_path_buf(), reason })?;
    Ok(table.entries.into_iter().collect())
}

/// Writes `contents` to `dir/name` through a temporary file in `dir` and a rename, so a
/// reader (or a killed run) sees the old file or the new one, never a mix.
pub fn write_atomic(dir: &Path, name: &str, contents: &str) -> Result<PathBuf> {
    let dest = dir.join(name);
    let ctx = || format!("writing {}", dest.display());
    std::fs::create_dir_all(dir).map_err(|e| Error::io(ctx(), e))?;
    // The mode a plain File::create gives (0666 less the umask), not the temporary file's
    // 0600: a serving account other than the tuner's must be able to read the files.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(|e| Error::io(ctx(), e))?;
    tmp.write_all(contents.as_bytes()).map_err(|e| Error::io(ctx(), e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(ctx(), e))?;
    tmp.persist(&dest).map_err(|e| Error::io(ctx(), e.error))?;
    // Make the rename itself durable (best effort: not every platform opens directories).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(dest)
}

/// Writes one file per shape from `records` (all of one shape set) into `dir`. A file already
/// there keeps its entries for other batch sizes (an earlier run into the same folder, or a
/// file put there to refine); `records` replace the entries of their own M.
pub fn write_files(dir: &Path, records: &[TuneRecord]) -> Result<Vec<PathBuf>> {
    let mut per_file: BTreeMap<String, BTreeMap<usize, KernelConfig>> = BTreeMap::new();
    for r in records {
        per_file.entry(file_name_of(r)).or_default().insert(r.m, r.config.clone());
    }
    per_file
        .into_iter()
        .map(|(name, entries)| {
            let mut all = existing_entries(&dir.join(&name))?;
            all.extend(entries);
            write_atomic(dir, &name, &table_json(&all))
        })
        .collect()
}

/// The entries of the config file at `path`, none when there is no file; an unreadable file is
/// an error, so that its entries are never silently dropped.
pub fn existing_entries(path: &Path) -> Result<BTreeMap<usize, KernelConfig>> {
    match path.try_exists() {
        Ok(false) => Ok(BTreeMap::new()),
        Ok(true) => read_table(path).map_err(|e| match e {
            Error::Config { path, reason } => Error::Config { path, reason: format!("{reason} (the tuner keeps this file's other entries: fix it or move it away)") },
            other => other,
        }),
        Err(e) => Err(Error::io(format!("checking {}", path.display()), e)),
    }
}

/// What `merge` does when two inputs hold different entries for the same file and M.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnConflict {
    /// Fail, naming the file, M and both entries (the default: shards of one run never overlap).
    #[default]
    Error,
    /// Keep the entry whose journal record has the smaller time; fails if either entry has
    /// no journal record (times from different devices are not comparable).
    KeepFaster,
}

/// Summary of a merge.
#[derive(Clone, Debug, Default)]
pub struct MergeReport {
    pub files: Vec<PathBuf>,
    pub entries: usize,
    /// Conflicts resolved by [`OnConflict::KeepFaster`], as messages.
    pub resolved: Vec<String>,
    /// Journal records carried into `out`'s journal.
    pub journal_records: usize,
    /// (file, M) measured in a journal but in no input file: a shard that stopped before
    /// finishing that shape. Rerun the shard (it resumes) and merge again.
    pub journal_only: Vec<(String, usize)>,
}

/// Config files and journals in `input` (a folder, or one file).
fn list_inputs(input: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let is_journal = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(JOURNAL_PREFIX) && n.ends_with(".jsonl"));
    let is_config = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".json") && (n.starts_with("N=") || n.starts_with("E=")));
    if input.is_file() {
        return Ok(if is_journal(input) { (vec![], vec![input.to_path_buf()]) } else { (vec![input.to_path_buf()], vec![]) });
    }
    let rd = std::fs::read_dir(input).map_err(|e| Error::io(format!("reading merge input {}", input.display()), e))?;
    let mut configs = Vec::new();
    let mut journals = Vec::new();
    for e in rd {
        let p = e.map_err(|e| Error::io(format!("reading merge input {}", input.display()), e))?.path();
        if is_journal(&p) {
            journals.push(p);
        } else if is_config(&p) {
            configs.push(p);
        }
    }
    configs.sort();
    journals.sort();
    Ok((configs, journals))
}

/// Joins shard outputs into `out` (created if needed): file by file, entry by entry. Two
/// inputs may hold the same file; their entries are united. The same M in two inputs is
/// fine when the entries are identical, else resolved by `on_conflict`. The journals found
/// in the inputs are merged into `out/tune-journal.merged.jsonl`, so merged outputs can be
/// merged again and resumed from. Nothing is written unless every input was read and every
/// conflict resolved.
pub fn merge(inputs: &[PathBuf], out: &Path, on_conflict: OnConflict) -> Result<MergeReport> {
    if inputs.is_empty() {
        return Err(Error::invalid("merge", "no inputs"));
    }
    let mut records: BTreeMap<RecordKey, TuneRecord> = BTreeMap::new();
    let mut files: BTreeMap<String, BTreeMap<usize, (KernelConfig, PathBuf)>> = BTreeMap::new();
    let mut all_journal_records = Vec::new();
    let mut report = MergeReport::default();
    for input in inputs {
        let (configs, journals) = list_inputs(input)?;
        if configs.is_empty() && journals.is_empty() {
            log::warn!("merge: {} holds no config files and no journals", input.display());
        }
        for j in journals {
            all_journal_records.extend(read_journal(&j)?);
        }
        for path in configs {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            for (m, cfg) in read_table(&path)? {
                let slot = files.entry(name.clone()).or_default();
                match slot.get(&m) {
                    None => {
                        slot.insert(m, (cfg, path.clone()));
                    }
                    Some((have, _)) if *have == cfg => {}
                    Some((have, from)) => {
                        let msg = format!("{name} M={m}: {} ({}) vs {} ({})", have.short(), from.display(), cfg.short(), path.display());
                        if on_conflict == OnConflict::Error {
                            return Err(Error::Config { path: path.clone(), reason: format!("conflicting entries: {msg}") });
                        }
                        let time_of = |c: &KernelConfig| {
                            all_journal_records.iter().filter(|r| file_name_of(r) == name && r.m == m && r.config == *c).map(|r| r.time_us).reduce(f64::min)
                        };
                        match (time_of(have), time_of(&cfg)) {
                            (Some(t_have), Some(t_new)) => {
                                if t_new < t_have {
                                    slot.insert(m, (cfg, path.clone()));
                                }
                                report.resolved.push(format!("{msg}: kept the faster ({:.2} us vs {:.2} us)", t_have.min(t_new), t_have.max(t_new)));
                            }
                            _ => {
                                return Err(Error::Config { path: path.clone(), reason: format!("conflicting entries and no journal timing for both: {msg}") });
                            }
                        }
                    }
                }
            }
        }
    }
    // Journal records: one per key; for a key measured twice keep the record whose entry
    // made it into the merged file (else the faster).
    for r in all_journal_records {
        let chosen = files.get(&file_name_of(&r)).and_then(|f| f.get(&r.m)).map(|(c, _)| c == &r.config);
        let key = r.key();
        match records.get(&key) {
            None => {
                records.insert(key, r);
            }
            Some(have) => {
                let have_chosen = files.get(&file_name_of(have)).and_then(|f| f.get(&have.m)).map(|(c, _)| c == &have.config);
                if (chosen == Some(true) && have_chosen != Some(true)) || (chosen == have_chosen && r.time_us < have.time_us) {
                    records.insert(key, r);
                }
            }
        }
    }
    for r in records.values() {
        let name = file_name_of(r);
        if !files.get(&name).is_some_and(|f| f.contains_key(&r.m)) {
            log::warn!("merge: {name} M={} is in a journal but in no config file (an unfinished shard?)", r.m);
            report.journal_only.push((name, r.m));
        }
    }
    for (name, entries) in &files {
        let table: BTreeMap<usize, KernelConfig> = entries.iter().map(|(m, (c, _))| (*m, c.clone())).collect();
        report.entries += table.len();
        report.files.push(write_atomic(out, name, &table_json(&table))?);
    }
    if !records.is_empty() {
        let mut text = String::new();
        for r in records.values() {
            text += &serde_json::to_string(r).map_err(|e| Error::io("serializing a tuning record", std::io::Error::other(e)))?;
            text.push('\n');
        }
        write_atomic(out, &format!("{JOURNAL_PREFIX}.merged.jsonl"), &text)?;
        report.journal_records = records.len();
    }
    Ok(report)
}
