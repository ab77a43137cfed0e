//! Tuned-config library: vLLM file names, parsing of real-format files (H200, MI300X with
//! AMD keys, MoE with triton_version), nearest-M rule against a brute-force reference,
//! malformed and hostile files, search order, batch-invariant switch, caching, threads,
//! warning-once, and device config names.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use blockfp8::backend::BackendKind;
use blockfp8::config::library::{parse_flag, settings_from_env_values};
use blockfp8::config::table::{MAX_FILE_BYTES, MAX_M};
use blockfp8::config::{check_dir, dense_file_name, moe_file_name, parse_dense_file_name, parse_moe_file_name, ConfigSource, ConfigTable, FileKey, Library, Lookup};
use blockfp8::device::{amd_name_for_pci_id, config_name_for, cpu_model_name, fp8_for_compute_capability, fp8_for_gfx, parse_pci_id};
use blockfp8::{Device, Error, Fp8Format};

const H200: &str = "N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json";
const MI300X: &str = "N=1536,K=7168,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8,block_shape=[128,128].json";
const MOE: &str = "E=256,N=256,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8,block_shape=[128,128].json";
const GRID: [usize; 18] = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096];

fn data(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/configs").join(sub)
}

fn read(sub: &str, name: &str) -> String {
    std::fs::read_to_string(data(sub).join(name)).unwrap()
}

fn keys(t: &ConfigTable) -> Vec<usize> {
    t.entries.iter().map(|(m, _)| *m).collect()
}

/// Python's `min(keys, key=lambda x: abs(x - M))` over keys in ascending order.
fn nearest_reference(keys: &[usize], m: usize) -> usize {
    let mut best = keys[0];
    for &k in keys {
        if k.abs_diff(m) < best.abs_diff(m) {
            best = k;
        }
    }
    best
}

// ---- file names ----

#[test]
fn dense_and_moe_names_match_vllm() {
    assert_eq!(dense_file_name(1536, 7168, "NVIDIA_H200", "fp8_w8a8", (128, 128)), H200);
    // The marketing name is converted as vLLM does.
    assert_eq!(dense_file_name(1536, 7168, "AMD Instinct MI300X", "fp8_w8a8", (128, 128)), MI300X);
    assert_eq!(
        dense_file_name(2048, 512, "NVIDIA A100-SXM4-80GB", "int8_w8a8", (128, 128)),
        "N=2048,K=512,device_name=NVIDIA_A100-SXM4-80GB,dtype=int8_w8a8,block_shape=[128,128].json"
    );
    assert_eq!(moe_file_name(256, 256, "AMD Instinct MI300X", Some("fp8_w8a8"), Some((128, 128))), MOE);
    assert_eq!(moe_file_name(8, 7168, "NVIDIA H100 80GB HBM3", None, None), "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json");
    assert_eq!(moe_file_name(8, 7168, "NVIDIA_H200", Some("fp8_w8a8"), None), "E=8,N=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8.json");
    // vLLM drops the block shape when a side is 0, and an empty dtype.
    assert_eq!(moe_file_name(8, 7168, "NVIDIA_H200", Some(""), Some((0, 128))), "E=8,N=7168,device_name=NVIDIA_H200.json");
}

#[test]
fn file_names_parse_back() {
    for (name, n, k, dev, dtype) in [
        (H200, 1536, 7168, "NVIDIA_H200", "fp8_w8a8"),
        (MI300X, 1536, 7168, "AMD_Instinct_MI300X", "fp8_w8a8"),
        ("N=2048,K=512,device_name=NVIDIA_A100-SXM4-80GB,dtype=int8_w8a8,block_shape=[128,128].json", 2048, 512, "NVIDIA_A100-SXM4-80GB", "int8_w8a8"),
        ("N=1536,K=7168,device_name=Intel(R)_Arc(TM)_Pro_B70_Graphics,dtype=fp8_w8a8,block_shape=[64,128].json", 1536, 7168, "Intel(R)_Arc(TM)_Pro_B70_Graphics", "fp8_w8a8"),
    ] {
        let key = parse_dense_file_name(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!((key.n, key.k, key.device.as_str(), key.dtype.as_str()), (n, k, dev, dtype));
        assert_eq!(key.file_name(), name);
    }
    assert_eq!(parse_dense_file_name("N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[64,128].json").unwrap().block, (64, 128));
    // A MoE name is not a dense name and vice versa.
    assert!(parse_dense_file_name(MOE).is_none());
    assert!(parse_moe_file_name(H200).is_none());
    let moe = parse_moe_file_name(MOE).unwrap();
    assert_eq!((moe.e, moe.n, moe.device.as_str(), moe.dtype.as_deref(), moe.block), (256, 256, "AMD_Instinct_MI300X", Some("fp8_w8a8"), Some((128, 128))));
    let plain = parse_moe_file_name("E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json").unwrap();
    assert_eq!((plain.dtype, plain.block), (None, None));
    // vLLM's own repository holds a few names with "[128, 128]": they are never looked up.
    assert!(parse_dense_file_name("N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json").is_none());
    assert!(parse_dense_file_name("N=15360,K=3840,device_name=AMD_Radeon_R9700,dtype=fp8_w8a8_per_token,input_dtype=float8_e4m3fn,out_dtype=bfloat16.json").is_none());
}

// ---- parsing real-format files ----

#[test]
fn h200_file_parses_and_writes_back_byte_for_byte() {
    // The fixture was written by Python's json.dump(indent=4) + "\n", as vLLM's tuner does.
    let text = read("h200", H200);
    let t = ConfigTable::parse(&text).unwrap();
    assert_eq!(keys(&t), GRID);
    let e = &t.nearest(1).unwrap().1;
    assert_eq!((e.block_m, e.block_n, e.block_k, e.group_m, e.num_warps, e.num_stages), (16, 64, 128, 1, 4, Some(3)));
    let e = &t.nearest(4096).unwrap().1;
    assert_eq!((e.block_m, e.block_n, e.block_k, e.group_m, e.num_warps, e.num_stages), (128, 128, 128, 16, 8, Some(4)));
    assert!(e.extra.is_empty());
    assert_eq!(t.to_json(), text);
}

#[test]
fn mi300x_file_with_amd_keys_and_no_num_stages() {
    let t = ConfigTable::parse(&read("mi300x", MI300X)).unwrap();
    assert_eq!(keys(&t), GRID);
    assert!(t.entries.iter().all(|(_, c)| c.num_stages.is_none() && c.extra.is_empty()));
    let (_, c) = t.nearest(1).unwrap();
    assert_eq!((c.block_m, c.block_n, c.kpack, c.matrix_instr_nonkdim, c.waves_per_eu), (32, 32, Some(1), Some(16), Some(0)));
    let (_, c) = t.nearest(4096).unwrap();
    assert_eq!((c.block_n, c.kpack, c.matrix_instr_nonkdim, c.waves_per_eu), (128, Some(2), Some(32), Some(2)));
    // Writing puts keys in vLLM's order; the content survives the round trip.
    let again = ConfigTable::parse(&t.to_json()).unwrap();
    assert_eq!(again, t);
    assert!(!t.to_json().contains("num_stages"));
}

#[test]
fn moe_file_with_triton_version_and_unknown_keys() {
    let t = ConfigTable::parse(&read("moe", MOE)).unwrap();
    assert_eq!(keys(&t), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]);
    let (_, c) = t.nearest(300).unwrap();
    assert_eq!(c.extra.get("SPLIT_K"), Some(&serde_json::json!(1)));
    assert_eq!(c.extra.get("cache_modifier"), Some(&serde_json::json!(".cg")));
    assert_eq!(c.num_stages, Some(2));
    // triton_version is dropped (vLLM's loader does the same); unknown keys are written back.
    let out = t.to_json();
    assert!(!out.contains("triton_version"));
    assert!(out.contains("\"SPLIT_K\": 1") && out.contains("\"cache_modifier\": \".cg\""));
    assert_eq!(ConfigTable::parse(&out).unwrap(), t);
}

// ---- nearest-M rule ----

#[test]
fn nearest_ties_and_beyond_grid() {
    let t = ConfigTable::parse(&read("h200", H200)).unwrap();
    assert_eq!(t.nearest(3).unwrap().0, 2);
    assert_eq!(t.nearest(2050).unwrap().0, 2048);
    assert_eq!(t.nearest(20).unwrap().0, 16); // between 16 and 24
    assert_eq!(t.nearest(21).unwrap().0, 24);
    assert_eq!(t.nearest(1280).unwrap().0, 1024); // between 1024 and 1536
    assert_eq!(t.nearest(100_000).unwrap().0, 4096);
    assert_eq!(t.nearest(usize::MAX).unwrap().0, 4096);
    assert_eq!(t.nearest(0).unwrap().0, 1);
    for m in 0..10_000 {
        assert_eq!(t.nearest(m).unwrap().0, nearest_reference(&GRID, m), "M={m}");
    }
    assert!(ConfigTable { entries: vec![] }.nearest(5).is_none());
}

#[test]
fn nearest_matches_reference_on_irregular_grids() {
    // Deterministic pseudo-random grids (splitmix64), checked against the brute-force rule.
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let cfg = ConfigTable::parse(&read("h200", H200)).unwrap().entries[0].1.clone();
    for _ in 0..50 {
        let count = 1 + (next() % 20) as usize;
        let mut grid: Vec<usize> = (0..count).map(|_| 1 + (next() % 5000) as usize).collect();
        grid.sort();
        grid.dedup();
        let t = ConfigTable::from_entries(grid.iter().rev().map(|&m| (m, cfg.clone())).collect()).unwrap();
        assert_eq!(keys(&t), grid);
        for m in 0..5200 {
            assert_eq!(t.nearest(m).unwrap().0, nearest_reference(&grid, m), "grid {grid:?} M={m}");
        }
    }
}

// ---- malformed and hostile files ----

fn rejects(text: &str, reason_part: &str) {
    match ConfigTable::parse(text) {
        Ok(t) => panic!("accepted {text:?} as {t:?}"),
        Err(e) => assert!(e.contains(reason_part), "reason {e:?} for {text:?} lacks {reason_part:?}"),
    }
}

const OK: &str = r#"{"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4}"#;

fn with(key: &str, value: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(OK).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove(key);
    let mut s = serde_json::to_string(&v).unwrap();
    s.pop();
    format!("{{\"1\": {s}, \"{key}\": {value}}}}}")
}

#[test]
fn malformed_files_are_rejected_with_reasons() {
    rejects("", "not a config object");
    rejects("{\"1\": {\"BLOCK_SIZE_M\": 16,", "not a config object");
    rejects("[1, 2]", "not a config object");
    rejects("\"text\"", "not a config object");
    rejects("{}", "empty object");
    rejects(&format!("{{\"batch\": {OK}}}"), "not a batch size");
    rejects(&format!("{{\"-1\": {OK}}}"), "not a batch size");
    rejects(&format!("{{\"1.5\": {OK}}}"), "not a batch size");
    rejects(&format!("{{\" 1\": {OK}}}"), "not a batch size");
    rejects(&format!("{{\"01\": {OK}}}"), "leading zero");
    rejects(&format!("{{\"0\": {OK}}}"), "outside");
    rejects(&format!("{{\"{}\": {OK}}}", MAX_M + 1), "outside");
    rejects(&format!("{{\"99999999999999999999999999\": {OK}}}"), "outside");
    rejects(&format!("{{\"1\": {OK}, \"1\": {OK}}}"), "duplicate key");
    rejects("{\"1\": 5}", "expected an object");
    rejects("{\"1\": [16, 64]}", "expected an object");
    rejects("{\"1\": {\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_M\": 32, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 1, \"num_warps\": 4}}", "duplicate key");
    rejects("{\"triton_version\": 3}", "must be a string");
    rejects("{\"triton_version\": \"3.4.0\"}", "empty object");
    // Wrong types and values.
    rejects(&with("BLOCK_SIZE_M", "\"16\""), "must be an integer");
    rejects(&with("BLOCK_SIZE_M", "true"), "must be an integer");
    rejects(&with("BLOCK_SIZE_M", "null"), "must be an integer");
    rejects(&with("BLOCK_SIZE_M", "16.5"), "not an integer");
    rejects(&with("BLOCK_SIZE_M", "16.0"), "not an integer");
    rejects(&with("num_warps", "-4"), "negative");
    rejects(&with("GROUP_SIZE_M", "4294967296"), "too large");
    rejects(&with("BLOCK_SIZE_N", "99999999999999999999999"), "not an integer");
    rejects(&with("BLOCK_SIZE_N", "1e400"), "not a config object");
    rejects(&with("BLOCK_SIZE_N", "48"), "power of two");
    rejects(&with("BLOCK_SIZE_N", "0"), "power of two");
    rejects(&with("BLOCK_SIZE_K", "2048"), "power of two");
    rejects(&with("num_warps", "0"), "num_warps");
    rejects(&with("num_warps", "64"), "num_warps");
    rejects(&with("GROUP_SIZE_M", "0"), "GROUP_SIZE_M");
    rejects(&with("num_stages", "100"), "num_stages");
    rejects(&with("kpack", "3"), "kpack");
    rejects(&with("matrix_instr_nonkdim", "8"), "matrix_instr_nonkdim");
    rejects(&with("waves_per_eu", "1000"), "waves_per_eu");
    rejects("{\"1\": {\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 1}}", "missing num_warps");
    // Size and count limits.
    rejects(&" ".repeat(MAX_FILE_BYTES + 1), "limit");
    let many: Vec<String> = (1..=9000).map(|m| format!("\"{m}\": {OK}")).collect();
    rejects(&format!("{{{}}}", many.join(",")), "more than 8192 entries");
    let extras: Vec<String> = (0..80).map(|i| format!("\"x{i}\": 0")).collect();
    rejects(&format!("{{\"1\": {{\"BLOCK_SIZE_M\": 16, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 1, \"num_warps\": 4, {}}}}}", extras.join(",")), "too many keys");
    rejects(&format!("{{\"{}\": {OK}}}", "7".repeat(500)), "longer than");
    // Deep nesting in an unknown key stops at serde_json's recursion limit, without a crash.
    rejects(&format!("{{\"1\": {{\"x\": {}{}}}}}", "[".repeat(100_000), "]".repeat(100_000)), "not a config object");
    // Values vLLM's AMD files use stay accepted.
    assert!(ConfigTable::parse(&with("num_stages", "0")).is_ok());
    assert!(ConfigTable::parse(&with("waves_per_eu", "0")).is_ok());
    assert!(ConfigTable::parse(&with("matrix_instr_nonkdim", "0")).is_ok());
    assert!(ConfigTable::parse(&with("SPLIT_K", "1")).is_ok());
    for bad in ["0", "-1", "\"2\"", "1.5", "5000"] {
        rejects(&with("SPLIT_K", bad), "SPLIT_K");
    }
    // blockfp8's cluster key: 1 or 2, an integer.
    for bad in ["3", "0", "\"2\"", "2.5", "-2", "null"] {
        rejects(&with("blockfp8_cluster", bad), "blockfp8_cluster");
    }
    let t = ConfigTable::parse(&with("blockfp8_cluster", "2")).unwrap();
    let (_, cfg) = t.nearest(1).unwrap();
    assert_eq!((cfg.cluster(), cfg.short().as_str()), (2, "m16n64k128g1w4c2"));
    assert!(cfg.is_blockfp8_only());
    let (_, plain) = ConfigTable::parse(&format!("{{\"1\": {OK}}}")).unwrap().nearest(1).map(|(m, c)| (m, c.clone())).unwrap();
    assert_eq!((plain.cluster(), plain.cluster_splits_k(), plain.is_blockfp8_only()), (1, false, false));
    // K-split pairs: a boolean, only with a cluster of two, and no workspace split besides.
    let entry = |extra: &str| format!("{{\"1\": {{\"BLOCK_SIZE_M\": 64, \"BLOCK_SIZE_N\": 64, \"BLOCK_SIZE_K\": 128, \"GROUP_SIZE_M\": 8, \"num_warps\": 4, \"num_stages\": 8, {extra}}}}}");
    let t = ConfigTable::parse(&entry("\"blockfp8_cluster\": 2, \"blockfp8_cluster_splits_k\": true")).unwrap();
    let (_, pair) = t.nearest(1).unwrap();
    assert_eq!((pair.cluster(), pair.cluster_splits_k(), pair.short().as_str(), pair.is_blockfp8_only()), (2, true, "m64n64k128g8w4s8c2k", true));
    assert!(ConfigTable::parse(&entry("\"blockfp8_cluster\": 2, \"blockfp8_cluster_splits_k\": true, \"SPLIT_K\": 1")).is_ok());
    assert!(!ConfigTable::parse(&entry("\"blockfp8_cluster\": 2, \"blockfp8_cluster_splits_k\": false")).unwrap().nearest(1).unwrap().1.cluster_splits_k());
    rejects(&entry("\"blockfp8_cluster_splits_k\": true"), "needs blockfp8_cluster = 2");
    rejects(&entry("\"blockfp8_cluster\": 2, \"blockfp8_cluster_splits_k\": 1"), "not true or false");
    rejects(&entry("\"blockfp8_cluster\": 2, \"blockfp8_cluster_splits_k\": true, \"SPLIT_K\": 2"), "no workspace split besides");
    // BLOCK_SIZE_N = 144 and 192 (CUDA's 128x144 and 128x192 tiles) are the non-powers of two a
    // file may hold; vLLM cannot run them, so they mark the entry as blockfp8's like the keys above.
    for n in [144, 192] {
        let t = ConfigTable::parse(&with("BLOCK_SIZE_N", &n.to_string())).unwrap();
        let (_, wide) = t.nearest(1).unwrap();
        assert_eq!((wide.block_n, wide.is_blockfp8_only()), (n, true));
    }
    rejects(&with("BLOCK_SIZE_N", "96"), "power of two");
    rejects(&with("BLOCK_SIZE_N", "160"), "power of two");
}

#[test]
fn check_dir_lists_every_bad_file_and_passes_good_ones() {
    let bad = check_dir(&data("bad"));
    // README-like non-JSON files are skipped; every .json file in bad/ is reported bad.
    assert_eq!(bad.len(), 15, "{bad:#?}");
    for (path, r) in &bad {
        assert!(r.is_err(), "{} passed: {r:?}", path.display());
    }
    let reason = |n: &str| {
        let (_, r) = bad.iter().find(|(p, _)| p.file_name().unwrap().to_string_lossy().starts_with(n)).unwrap();
        r.clone().unwrap_err()
    };
    assert!(reason("N=1,").contains("EOF"));
    assert!(reason("N=2,").contains("must be an integer"));
    assert!(reason("N=3,").contains("not an integer"));
    assert!(reason("N=4,").contains("too large"));
    assert!(reason("N=5,").contains("empty object"));
    assert!(reason("N=6,").contains("not a batch size"));
    assert!(reason("N=7,").contains("not a batch size"));
    assert!(reason("N=8,").contains("negative"));
    assert!(reason("N=9,").contains("outside"));
    assert!(reason("N=10,").contains("not a config object"));
    assert!(reason("N=11,").contains("does not divide"));
    assert!(reason("N=12,").contains("duplicate key"));
    assert!(reason("N=13,").contains("power of two"));
    assert!(reason("N=1536,").contains("spaces"));
    assert!(reason("notes.json").contains("not a config name"));
    for sub in ["h200", "mi300x", "moe", "override"] {
        let good = check_dir(&data(sub));
        assert_eq!(good.len(), 1);
        let summary = good[0].1.as_ref().unwrap();
        assert!(summary.entries >= 3 && summary.m_min == 1 && summary.m_max == 4096, "{summary}");
    }
    let moe = check_dir(&data("moe"));
    assert!(matches!(moe[0].1.as_ref().unwrap().key, FileKey::Moe(_)));
    let missing = check_dir(&data("no-such-folder"));
    assert_eq!(missing.len(), 1);
    assert!(missing[0].1.as_ref().unwrap_err().contains("cannot read folder"));
}

// ---- library: search order, switch, cache, threads, warnings ----

fn lookup_h200(lib: &Library) -> Option<Arc<ConfigTable>> {
    lib.lookup("NVIDIA_H200", 1536, 7168, "fp8_w8a8", (128, 128))
}

#[test]
fn first_folder_wins_and_search_falls_through() {
    let h200 = ConfigTable::parse(&read("h200", H200)).unwrap();
    let over = ConfigTable::parse(&read("override", H200)).unwrap();
    let lib = Library::new(vec![data("override"), data("h200")], false, false);
    assert_eq!(*lookup_h200(&lib).unwrap(), over);
    let lib = Library::new(vec![data("h200"), data("override")], false, false);
    assert_eq!(*lookup_h200(&lib).unwrap(), h200);
    // A folder without the file is skipped.
    let lib = Library::new(vec![data("mi300x"), data("h200")], false, false);
    match lib.lookup_verbose("NVIDIA H200", 1536, 7168, "fp8_w8a8", (128, 128)) {
        Lookup::Found { table, source, skipped } => {
            assert_eq!(*table, h200);
            assert_eq!(source, ConfigSource::File(data("h200").join(H200)));
            assert_eq!(skipped.len(), 1);
            assert_eq!(skipped[0].place, ConfigSource::File(data("mi300x").join(H200)));
        }
        other => panic!("{other:?}"),
    }
    // The device name may be the marketing name; the lookup converts it.
    let lib = Library::new(vec![data("mi300x")], false, false);
    assert!(lib.lookup("AMD Instinct MI300X", 1536, 7168, "fp8_w8a8", (128, 128)).is_some());
    // Other shapes, dtypes, blocks and devices are misses.
    assert!(lib.lookup("AMD Instinct MI300X", 1536, 7168, "int8_w8a8", (128, 128)).is_none());
    assert!(lib.lookup("AMD Instinct MI300X", 1536, 7168, "fp8_w8a8", (64, 128)).is_none());
    assert!(lib.lookup("AMD Instinct MI325X", 1536, 7168, "fp8_w8a8", (128, 128)).is_none());
}

static BUILTIN_H200: &[(&str, &str)] = &[(H200, include_str!("data/configs/h200/N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"))];

#[test]
fn user_folder_wins_over_shipped_configs() {
    let shipped = ConfigTable::parse(BUILTIN_H200[0].1).unwrap();
    let over = ConfigTable::parse(&read("override", H200)).unwrap();
    let lib = Library::new(vec![data("override")], true, false).with_builtin_configs(BUILTIN_H200);
    assert_eq!(*lookup_h200(&lib).unwrap(), over);
    // Without the folder (or with a folder lacking the file) the shipped file is used.
    let lib = Library::new(vec![data("mi300x")], true, false).with_builtin_configs(BUILTIN_H200);
    match lib.lookup_verbose("NVIDIA_H200", 1536, 7168, "fp8_w8a8", (128, 128)) {
        Lookup::Found { table, source, .. } => {
            assert_eq!(*table, shipped);
            assert_eq!(source, ConfigSource::Embedded(H200.to_string()));
            assert_eq!(source.to_string(), format!("embedded:configs/{H200}"));
        }
        other => panic!("{other:?}"),
    }
    // use_embedded = false ignores the shipped set.
    let lib = Library::new(vec![], false, false).with_builtin_configs(BUILTIN_H200);
    assert!(lookup_h200(&lib).is_none());
}

#[test]
fn batch_invariant_switch_ignores_every_file() {
    let lib = Library::new(vec![data("h200"), data("override")], true, true).with_builtin_configs(BUILTIN_H200);
    assert!(lookup_h200(&lib).is_none());
    assert!(matches!(lib.lookup_verbose("NVIDIA_H200", 1536, 7168, "fp8_w8a8", (128, 128)), Lookup::BatchInvariant));
    assert_eq!(lib.files_read(), 0);
    assert!(lib.warnings().is_empty(), "the switch is deliberate: no miss warnings");
    // The same library without the switch finds the file.
    assert!(lookup_h200(&Library::new(vec![data("h200")], true, false)).is_some());
}

#[test]
fn environment_values_are_parsed() {
    use std::ffi::OsStr;
    let (dirs, bi) = settings_from_env_values(Some(OsStr::new("/a/b:/c::/d")), Some(OsStr::new("1")));
    assert_eq!(dirs, [PathBuf::from("/a/b"), PathBuf::from("/c"), PathBuf::from("/d")]);
    assert!(bi);
    let (dirs, bi) = settings_from_env_values(None, None);
    assert!(dirs.is_empty() && !bi);
    for (v, want) in [("1", Some(true)), ("TRUE", Some(true)), ("on", Some(true)), ("2", Some(true)), ("0", Some(false)), ("", Some(false)), ("off", Some(false)), ("maybe", None)] {
        assert_eq!(parse_flag(v), want, "{v:?}");
    }
    assert!(!settings_from_env_values(None, Some(OsStr::new("maybe"))).1);
}

#[test]
fn a_file_is_read_once_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(H200);
    std::fs::write(&path, read("h200", H200)).unwrap();
    let lib = Library::new(vec![dir.path().to_path_buf()], false, false);
    let first = lookup_h200(&lib).unwrap();
    // Changing (then removing) the file does not change what this library serves.
    std::fs::write(&path, read("override", H200)).unwrap();
    let second = lookup_h200(&lib).unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    std::fs::remove_file(&path).unwrap();
    assert!(Arc::ptr_eq(&first, &lookup_h200(&lib).unwrap()));
    assert_eq!(lib.files_read(), 1);
    // Misses are cached too: a file appearing later is not seen by this library...
    assert!(lib.lookup("NVIDIA_H200", 1536, 7168, "fp8_w8a8", (128, 128)).is_some());
    assert!(lib.lookup("AMD_Instinct_MI300X", 1536, 7168, "fp8_w8a8", (128, 128)).is_none());
    std::fs::write(dir.path().join(MI300X), read("mi300x", MI300X)).unwrap();
    assert!(lib.lookup("AMD_Instinct_MI300X", 1536, 7168, "fp8_w8a8", (128, 128)).is_none());
    assert_eq!(lib.files_read(), 1);
    // ...while a new library reads the folder afresh.
    let fresh = Library::new(vec![dir.path().to_path_buf()], false, false);
    assert!(fresh.lookup("AMD_Instinct_MI300X", 1536, 7168, "fp8_w8a8", (128, 128)).is_some());
}

#[test]
fn many_threads_share_one_read() {
    let lib = Arc::new(Library::new(vec![data("h200"), data("mi300x")], false, false));
    let threads = 16;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (lib, barrier) = (lib.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut got = Vec::new();
                for j in 0..200 {
                    let device = if (i + j) % 2 == 0 { "NVIDIA H200" } else { "AMD Instinct MI300X" };
                    let t = lib.lookup(device, 1536, 7168, "fp8_w8a8", (128, 128)).unwrap();
                    assert!(lib.lookup("NVIDIA H200", 9999, 7168, "fp8_w8a8", (128, 128)).is_none());
                    got.push((device, t));
                }
                got
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    let h200 = lib.lookup("NVIDIA_H200", 1536, 7168, "fp8_w8a8", (128, 128)).unwrap();
    let mi = lib.lookup("AMD_Instinct_MI300X", 1536, 7168, "fp8_w8a8", (128, 128)).unwrap();
    for (device, t) in &results {
        let want = if device.starts_with("NVIDIA") { &h200 } else { &mi };
        assert!(Arc::ptr_eq(t, want));
    }
    assert_eq!(lib.files_read(), 2, "each file read once");
    assert_eq!(lib.warnings().len(), 1, "one warning for the one missing shape: {:?}", lib.warnings());
}

#[test]
fn a_miss_warns_once_naming_paths_and_the_tune_command() {
    let lib = Library::new(vec![data("h200"), data("override")], true, false).with_builtin_configs(BUILTIN_H200);
    for _ in 0..5 {
        assert!(lib.lookup("NVIDIA H200", 4096, 7168, "fp8_w8a8", (128, 128)).is_none());
        assert!(lib.lookup("NVIDIA_H200", 4096, 7168, "fp8_w8a8", (128, 128)).is_none());
    }
    let w = lib.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    let name = dense_file_name(4096, 7168, "NVIDIA_H200", "fp8_w8a8", (128, 128));
    assert!(w[0].contains(&data("h200").join(&name).display().to_string()), "{}", w[0]);
    assert!(w[0].contains(&data("override").join(&name).display().to_string()));
    assert!(w[0].contains(&format!("embedded:configs/{name}")));
    assert!(w[0].contains("blockfp8 tune --shape 4096,7168 --save-path DIR"));
    assert!(w[0].contains("BLOCKFP8_CONFIG_DIR"));
    // Each distinct (device, N, K, dtype, block) warns once.
    lib.lookup("NVIDIA_H200", 4096, 7168, "int8_w8a8", (128, 128));
    lib.lookup("NVIDIA_H200", 4096, 7168, "fp8_w8a8", (128, 64));
    lib.lookup("NVIDIA_H100_80GB_HBM3", 4096, 7168, "fp8_w8a8", (128, 128));
    lib.lookup("NVIDIA_H200", 4096, 512, "fp8_w8a8", (128, 128));
    lib.lookup("NVIDIA_H200", 4096, 512, "fp8_w8a8", (128, 128));
    assert_eq!(lib.warnings().len(), 5);
    match lib.lookup_verbose("NVIDIA_H200", 4096, 7168, "fp8_w8a8", (128, 128)) {
        Lookup::Missing { file_name, tried } => {
            assert_eq!(file_name, name);
            assert_eq!(tried.len(), 3);
            assert!(tried.iter().all(|a| a.problem.contains("not")));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(lib.warnings().len(), 5);
}

#[test]
fn a_bad_file_is_logged_and_counts_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    let bad_dir = dir.path().join("bad");
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::write(bad_dir.join(H200), "{\"1\": {\"BLOCK_SIZE_M\": \"sixteen\"}}").unwrap();
    let lib = Library::new(vec![bad_dir.clone(), data("h200")], false, false);
    let t = lookup_h200(&lib).unwrap();
    assert_eq!(*t, ConfigTable::parse(&read("h200", H200)).unwrap());
    let w = lib.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains(&bad_dir.join(H200).display().to_string()) && w[0].contains("must be an integer"), "{}", w[0]);
    lookup_h200(&lib);
    assert_eq!(lib.warnings().len(), 1, "logged once");

    // Alone, the bad file is a miss (two warnings: the bad file, then the miss).
    let lib = Library::new(vec![bad_dir.clone()], false, false);
    assert!(lookup_h200(&lib).is_none());
    assert_eq!(lib.warnings().len(), 2);
    match lib.lookup_verbose("NVIDIA_H200", 1536, 7168, "fp8_w8a8", (128, 128)) {
        Lookup::Missing { tried, .. } => assert!(tried[0].problem.contains("must be an integer")),
        other => panic!("{other:?}"),
    }
}

/// The tuner reads what a plan serves now for the very shapes it is tuning: a missing file is
/// expected there, so that library keeps misses out of its warnings, but not bad files.
#[test]
fn a_library_expecting_misses_warns_only_of_bad_files() {
    let lib = Library::new(vec![data("h200"), data("override")], true, false).with_builtin_configs(BUILTIN_H200).expecting_misses();
    assert!(lib.lookup("NVIDIA_H200", 4096, 7168, "fp8_w8a8", (128, 128)).is_none());
    match lib.lookup_verbose("NVIDIA_H200", 4096, 7168, "fp8_w8a8", (128, 128)) {
        Lookup::Missing { tried, .. } => assert_eq!(tried.len(), 3, "{tried:?}"),
        other => panic!("{other:?}"),
    }
    assert!(lib.warnings().is_empty(), "{:?}", lib.warnings());
    // A file that is there is still found.
    assert_eq!(*lookup_h200(&lib).unwrap(), ConfigTable::parse(&read("h200", H200)).unwrap());

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(H200), "{\"1\": {\"BLOCK_SIZE_M\": \"sixteen\"}}").unwrap();
    let lib = Library::new(vec![dir.path().to_path_buf()], false, false).expecting_misses();
    assert!(lookup_h200(&lib).is_none());
    let w = lib.warnings();
    assert_eq!(w.len(), 1, "the bad file, and no miss after it: {w:?}");
    assert!(w[0].contains("must be an integer"), "{}", w[0]);
}

#[test]
fn hostile_files_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    // A sparse file over the limit is rejected from its size, before reading.
    let big = std::fs::File::create(dir.path().join(H200)).unwrap();
    big.set_len(MAX_FILE_BYTES as u64 + 1).unwrap();
    // A folder with a config's name, and a file that is not UTF-8.
    std::fs::create_dir(dir.path().join(MI300X)).unwrap();
    let k512 = dense_file_name(1536, 512, "NVIDIA_H200", "fp8_w8a8", (128, 128));
    std::fs::write(dir.path().join(&k512), [0x7b, 0xff, 0xfe, 0x7d]).unwrap();
    let lib = Library::new(vec![dir.path().to_path_buf()], false, false);
    assert!(lookup_h200(&lib).is_none());
    assert!(lib.lookup("AMD_Instinct_MI300X", 1536, 7168, "fp8_w8a8", (128, 128)).is_none());
    assert!(lib.lookup("NVIDIA_H200", 1536, 512, "fp8_w8a8", (128, 128)).is_none());
    assert_eq!(lib.files_read(), 0);
    let w = lib.warnings().join("\n");
    assert!(w.contains("byte limit") && w.contains("not a regular file") && w.contains("not UTF-8"), "{w}");
    // A device name cannot climb out of the folder: '/' becomes '_'.
    assert!(lib.lookup("../../etc/passwd", 1, 1, "fp8_w8a8", (128, 128)).is_none());
    assert!(lib.warnings().last().unwrap().contains("device_name=.._.._etc_passwd"));
    // Nor can a dtype: nothing outside the folder is opened.
    // ("N=..,dtype=" + "/../x" would resolve to inner/x,... once a folder named like the prefix exists.)
    let inner = dir.path().join("inner");
    std::fs::create_dir_all(inner.join("N=1536,K=7168,device_name=NVIDIA_H200,dtype=")).unwrap();
    std::fs::write(inner.join("x,block_shape=[128,128].json"), read("h200", H200)).unwrap();
    let inner = Library::new(vec![inner], false, false);
    assert!(inner.lookup("NVIDIA_H200", 1536, 7168, "/../x", (128, 128)).is_none());
    assert_eq!(inner.files_read(), 0);
    assert!(inner.warnings()[0].contains("cannot be part of a file name"));
}

// ---- devices ----

fn amd(name: &str, pci: Option<u16>) -> Device {
    Device { backend: BackendKind::Rocm, ordinal: 0, name: name.into(), arch: "gfx942".into(), fp8: Fp8Format::E4m3fnuz, compute_units: 304, pci_id: pci }
}

#[test]
fn device_config_names() {
    assert_eq!(config_name_for("AMD Instinct MI300X"), "AMD_Instinct_MI300X");
    assert_eq!(config_name_for("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3");
    assert_eq!(config_name_for("NVIDIA A100-SXM4-80GB"), "NVIDIA_A100-SXM4-80GB");
    assert_eq!(config_name_for("NVIDIA H200"), "NVIDIA_H200");
    assert_eq!(config_name_for("AMD Instinct MI325 OAM"), "AMD_Instinct_MI325_OAM");
    assert_eq!(config_name_for("Vendor GPU 8/16"), "Vendor_GPU_8_16");
    assert_eq!(config_name_for("NVIDIA_H200"), "NVIDIA_H200", "idempotent");
    // vLLM's PCI-id names win over whatever the driver reports.
    for (id, want) in [
        (0x74a1, "AMD_Instinct_MI300X"),
        (0x74b5, "AMD_Instinct_MI300X"),
        (0x74a5, "AMD_Instinct_MI325X"),
        (0x74b9, "AMD_Instinct_MI325X"),
        (0x74a0, "AMD_Instinct_MI300A"),
        (0x74a2, "AMD_Instinct_MI308X"),
        (0x74a9, "AMD_Instinct_MI300X_HF"),
        (0x74bd, "AMD_Instinct_MI300X_HF"),
    ] {
        assert_eq!(amd_name_for_pci_id(id), Some(want));
        assert_eq!(amd(" AMD Radeon Graphics", Some(id)).config_name(), want);
    }
    assert_eq!(amd_name_for_pci_id(0x1234), None);
    assert_eq!(amd("AMD Instinct MI325 OAM", Some(0x1234)).config_name(), "AMD_Instinct_MI325_OAM");
    assert_eq!(amd("AMD Instinct MI300X", None).config_name(), "AMD_Instinct_MI300X");
    // The PCI-id map is AMD's: a CPU or NVIDIA device keeps its own name.
    let mut nv = amd("NVIDIA H200", Some(0x74a1));
    nv.backend = BackendKind::Cuda;
    assert_eq!(nv.config_name(), "NVIDIA_H200");
    assert_eq!(parse_pci_id("0x74a1\n"), Some(0x74a1));
    assert_eq!(parse_pci_id("74B5"), Some(0x74b5));
    assert_eq!(parse_pci_id("0x"), None);
    assert_eq!(parse_pci_id("0x123456"), None);
}

#[test]
fn fp8_flavours_of_architectures() {
    assert_eq!(fp8_for_gfx("gfx942").unwrap(), Fp8Format::E4m3fnuz);
    assert_eq!(fp8_for_gfx("gfx942:sramecc+:xnack-").unwrap(), Fp8Format::E4m3fnuz);
    assert_eq!(fp8_for_gfx("gfx940").unwrap(), Fp8Format::E4m3fnuz);
    assert_eq!(fp8_for_gfx("gfx941").unwrap(), Fp8Format::E4m3fnuz);
    assert_eq!(fp8_for_gfx("gfx950").unwrap(), Fp8Format::E4m3fn);
    for bad in ["gfx90a", "gfx1100", "sm_90", "", "x86_64", "gfx9420"] {
        match fp8_for_gfx(bad) {
            Err(Error::Unsupported { reason, .. }) => assert!(reason.contains("gfx942")),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    assert_eq!(fp8_for_compute_capability(9, 0).unwrap(), Fp8Format::E4m3fn);
    assert_eq!(fp8_for_compute_capability(8, 9).unwrap(), Fp8Format::E4m3fn);
    assert_eq!(fp8_for_compute_capability(10, 0).unwrap(), Fp8Format::E4m3fn);
    assert!(matches!(fp8_for_compute_capability(8, 0), Err(Error::Unsupported { .. })));
    assert!(matches!(fp8_for_compute_capability(7, 5), Err(Error::Unsupported { .. })));
}

#[test]
fn cpu_device() {
    let d = Device::cpu();
    assert_eq!(d.backend, BackendKind::Cpu);
    assert_eq!(d.arch, std::env::consts::ARCH);
    assert_eq!(d.fp8, Fp8Format::E4m3fn);
    assert_eq!(d.compute_units as usize, rayon::current_num_threads());
    assert!(!d.name.is_empty());
    assert!(!d.config_name().contains(' ') && !d.config_name().contains('/'));
    if let Some(expected) = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| cpu_model_name(&s)) {
        assert_eq!(d.name, expected);
    }
    let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC  9654 96-Core Processor \nflags\t: fpu\n";
    assert_eq!(cpu_model_name(info).as_deref(), Some("AMD EPYC 9654 96-Core Processor"));
    assert_eq!(cpu_model_name("processor : 0\nBogoMIPS : 50.00\n"), None);
}
