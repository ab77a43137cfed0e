//! Every file reference in the repository's sources, scripts and documents resolves inside
//! the repository: no `TEAM.md`, no `shared/...` (neither ships), no path to a deleted script,
//! patch or document. Paths that name something outside (upstream files such as
//! `vllm/...`, `OUT_DIR/...`, `$OUT/...`, URLs) and `REV:path` (git history) are not checked;
//! `.device-bin/NAME` (the device machine's staging folder) must name a script in `ci/h200/`
//! or `cuda/`.

use std::path::{Path, PathBuf};

/// Extensions of the files scanned for references.
const SCANNED: &[&str] = &["rs", "md", "sh", "yml", "yaml", "toml", "h", "cuh", "cu", "hip"];
/// Extensions a token must end with to count as a file reference.
const REFERENCED: &[&str] = &["rs", "md", "sh", "cu", "cuh", "hip", "h", "json", "jsonl", "toml", "yml", "yaml", "patch", "txt", "py"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scanned_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            // Build outputs and git's own files are not the repository's text.
            if name != "target" && name != ".git" && !name.starts_with("target") {
                scanned_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| SCANNED.contains(&e.to_string_lossy().as_ref())) {
            out.push(path);
        }
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./<>*$:[],{}-".contains(c)
}

/// Tokens of `line` that look like file references: a referenced extension, and either a
/// `/` or a bare `*.md` name.
fn candidate_tokens(line: &str) -> Vec<&str> {
    line.split(|c: char| !is_token_char(c))
        .map(|t| t.trim_end_matches(['.', ',', ':', ';']).trim_start_matches([',', ':', ';']))
        .filter(|t| t.rsplit_once('.').is_some_and(|(_, ext)| REFERENCED.contains(&ext)))
        .filter(|t| !t.contains("://") && !t.starts_with(['/', '~']) && !t.contains(['*', '<', '{', '$']))
        .collect()
}

/// Why `tok`, found in a file in `dir`, does not resolve (None: it does, or it is not a
/// reference into the repository).
fn dangling(root: &Path, dir: &Path, tok: &str) -> Option<String> {
    let is_rev = |s: &str| s.len() >= 7 && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if tok.split_once(':').is_some_and(|(rev, _)| is_rev(rev)) {
        return None; // `git show REV:path`
    }
    if let Some(name) = tok.strip_prefix(".device-bin/") {
        let staged = root.join("ci/h200").join(name).exists() || root.join("cuda").join(name).exists();
        return (!staged).then(|| format!("{tok}: no ci/h200/{name} or cuda/{name} to stage"));
    }
    let exists = |p: &str| root.join(p).exists() || dir.join(p).exists();
    match tok.split_once('/') {
        // A path whose first part is not in the repository names something elsewhere.
        Some((first, _)) if !(exists(first) || first == "." || first == "..") => None,
        None if !tok.ends_with(".md") => None,
        _ => (!exists(tok)).then(|| format!("{tok} does not exist")),
    }
}

#[test]
fn every_reference_resolves_inside_the_repository() {
    let root = root();
    let mut files = Vec::new();
    scanned_files(&root, &mut files);
    files.sort();
    assert!(files.len() > 50, "scanned only {} files from {}", files.len(), root.display());
    let this = root.join("tests/references.rs");
    // Spelled in two parts so that this file does not flag itself.
    let forbidden = [format!("{}.md", "TEAM"), format!("{}/", "shared")];
    let mut bad = Vec::new();
    for file in files.iter().filter(|f| **f != this) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let dir = file.parent().unwrap();
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            for word in &forbidden {
                if line.contains(word.as_str()) && !root.join(word.trim_end_matches('/')).exists() {
                    bad.push(format!("{rel}:{}: mentions {word}, which is not in the repository", i + 1));
                }
            }
            // A bare name on a line about the build's output folder is a generated file.
            let generated = line.contains("out_dir") || line.contains("OUT_DIR");
            for tok in candidate_tokens(line) {
                if generated && !tok.contains('/') {
                    continue;
                }
                if let Some(why) = dangling(&root, dir, tok) {
                    bad.push(format!("{rel}:{}: {why}", i + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} dangling references:\n{}", bad.len(), bad.join("\n"));
}

/// The checker itself: it flags what it must and passes what it must.
#[test]
fn the_checker_tells_dangling_from_resolved() {
    let root = root();
    let here = root.join("ci");
    let flagged = |line: &str| candidate_tokens(line).into_iter().filter_map(|t| dangling(&root, &here, t)).collect::<Vec<_>>();
    assert!(flagged("see `ci/h200/no_such_script.sh` and [x](../NOTES.md)").len() == 2);
    assert!(flagged("bash .device-bin/nonexistent_script.sh").len() == 1);
    assert!(flagged("see README.md, `src/gemm.rs`, cpu.sh and [ci](gpu-tests.sh)").is_empty());
    assert!(flagged("upstream vllm/model_executor/x.py, $OUT/bench.md, OUT_DIR/a.rs, https://x.org/a.md").is_empty());
    assert!(flagged("git show 7641bc1:ci/h200/final9b.sh").is_empty());
    assert!(flagged("bash .device-bin/gpu-tests.sh").len() == 1, "staged scripts come from ci/h200 or cuda");
}
