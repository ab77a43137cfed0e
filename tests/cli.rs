//! The `blockfp8` binary end to end: .npy files in and out, config commands, bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use blockfp8::{npy, Fp8Format, ScaleLayout};
use common::{random_quantized_problem, reference_gemm_f64};

fn blockfp8(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blockfp8")).args(args).env_remove("BLOCKFP8_CONFIG_DIR").output().expect("run blockfp8")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A .npy file written byte by byte as NumPy lays it out (format 1.0), independently of
/// the crate's writer.
fn write_raw_npy_f32(path: &Path, shape: (usize, usize), data: &[f32]) {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", shape.0, shape.1);
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for v in data {
        bytes.extend(v.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn info_lists_the_cpu_device() {
    let o = blockfp8(&["info"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("backends compiled in: cpu"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("cpu ") && l.contains("e4m3fn")), "{out}");
}

#[test]
fn config_filename_matches_vllm_naming() {
    let o = blockfp8(&["config", "filename", "--n", "7168", "--k", "18432", "--device-name", "AMD Instinct MI300X"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "N=7168,K=18432,device_name=AMD_Instinct_MI300X,dtype=fp8_w8a8,block_shape=[128,128].json");
    let o = blockfp8(&["config", "filename", "--n", "576", "--k", "7168", "--device-name", "NVIDIA H100 80GB HBM3", "--block-shape", "64,128"]);
    assert_eq!(stdout(&o).trim(), "N=576,K=7168,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[64,128].json");
    let o = blockfp8(&["config", "filename", "--n", "576", "--k", "7168", "--device-name", "X", "--block-shape", "64"]);
    assert!(!o.status.success());
}

#[test]
fn config_show_picks_nearest_m_and_reports_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let name = "N=512,K=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json";
    let body = r#"{
    "1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 3},
    "64": {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 32, "num_warps": 8, "num_stages": 2}
}"#;
    std::fs::write(dir.path().join(name), body).unwrap();
    let show = |m: &str| blockfp8(&["config", "show", "--n", "512", "--k", "256", "--m", m, "--device-name", "NVIDIA H200", "--dir", s(dir.path())]);
    let o = show("20");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("one JSON object");
    assert_eq!(v["BLOCK_SIZE_M"], 16);
    let v: serde_json::Value = serde_json::from_str(stdout(&show("40")).trim()).unwrap();
    assert_eq!(v["BLOCK_SIZE_M"], 64);

    let o = blockfp8(&["config", "show", "--n", "513", "--k", "256", "--m", "1", "--device-name", "NVIDIA H200", "--dir", s(dir.path())]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("N=513,K=256,device_name=NVIDIA_H200"), "{}", stderr(&o));
    // The miss is the answer: no warning of a default GEMM path that nothing runs.
    assert!(!stderr(&o).contains("sub-optimal"), "{}", stderr(&o));
}

#[test]
fn config_check_lists_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"8": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4}}"#;
    std::fs::write(dir.path().join("N=512,K=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"), good).unwrap();
    let o = blockfp8(&["config", "check", s(dir.path())]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    std::fs::write(dir.path().join("N=1024,K=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"), "{\"8\": {\"BLOCK_SIZE_M\": \"big\"}}").unwrap();
    let o = blockfp8(&["config", "check", s(dir.path())]);
    assert!(!o.status.success());
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("BAD") && l.contains("N=1024")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("ok") && l.contains("N=512")), "{out}");
}

fn tmp(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

#[test]
fn quant_then_gemm_through_npy_files_matches_float64() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for format in [Fp8Format::E4m3fn, Fp8Format::E4m3fnuz] {
        let fp8 = if format == Fp8Format::E4m3fn { "e4m3fn" } else { "e4m3fnuz" };
        let (m, n, k) = (5, 129, 200);
        let qp = random_quantized_problem(m, n, k, format, ScaleLayout::RowMajor, 11);
        // Activations go through `blockfp8 quant`, from a file written independently of the crate.
        write_raw_npy_f32(&tmp(d, "x.npy"), (m, k), &qp.x);
        let o = blockfp8(&["quant", "--x", s(&tmp(d, "x.npy")), "--out-q", s(&tmp(d, "q.npy")), "--out-s", s(&tmp(d, "s.npy")), "--fp8", fp8, "--backend", "cpu"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let q = npy::read(&tmp(d, "q.npy")).unwrap();
        assert_eq!(q.shape, vec![m, k]);
        assert_eq!(q.into_u8("q").unwrap(), qp.a, "CLI quantization differs from the library's");
        let sc = npy::read(&tmp(d, "s.npy")).unwrap();
        assert_eq!(sc.shape, vec![m, 2]);
        assert_eq!(sc.into_f32("s").unwrap(), qp.a_scales);

        npy::write_u8(&tmp(d, "b.npy"), &[n, k], &qp.b).unwrap();
        npy::write_f32(&tmp(d, "bs.npy"), &[2, 2], &qp.b_scales).unwrap();
        let o = blockfp8(&[
            "gemm", "--a", s(&tmp(d, "q.npy")), "--as", s(&tmp(d, "s.npy")), "--b", s(&tmp(d, "b.npy")), "--bs", s(&tmp(d, "bs.npy")),
            "--out", s(&tmp(d, "c.npy")), "--fp8", fp8, "--out-dtype", "f32", "--backend", "cpu",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let c = npy::read(&tmp(d, "c.npy")).unwrap();
        assert_eq!(c.shape, vec![m, n]);
        let got: Vec<f64> = c.into_f32("c").unwrap().into_iter().map(f64::from).collect();
        let want = reference_gemm_f64(&qp.problem());
        let diff = blockfp8::gemm::calc_diff(&got, &want);
        assert!(diff < 1e-9, "{fp8}: calc_diff {diff}");

        // bf16 output comes back as uint16 bit patterns.
        let o = blockfp8(&[
            "gemm", "--a", s(&tmp(d, "q.npy")), "--as", s(&tmp(d, "s.npy")), "--b", s(&tmp(d, "b.npy")), "--bs", s(&tmp(d, "bs.npy")),
            "--out", s(&tmp(d, "c16.npy")), "--fp8", fp8, "--backend", "cpu",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let c16 = npy::read(&tmp(d, "c16.npy")).unwrap();
        let got: Vec<f64> = match c16.data {
            npy::Data::U16(v) => v.into_iter().map(|b| half::bf16::from_bits(b).to_f64()).collect(),
            other => panic!("bf16 output should be uint16, got {other:?}"),
        };
        assert!(blockfp8::gemm::calc_diff(&got, &want) < 1e-5);
    }
}

#[test]
fn gemm_bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let qp = random_quantized_problem(4, 128, 256, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 3);
    npy::write_u8(&tmp(d, "a.npy"), &[4, 256], &qp.a).unwrap();
    npy::write_f32(&tmp(d, "as.npy"), &[4, 2], &qp.a_scales).unwrap();
    npy::write_u8(&tmp(d, "b.npy"), &[128, 256], &qp.b).unwrap();
    npy::write_u8(&tmp(d, "b_k.npy"), &[256, 128], &qp.b).unwrap();
    npy::write_f32(&tmp(d, "bs.npy"), &[1, 2], &qp.b_scales).unwrap();
    npy::write_f32(&tmp(d, "bs_bad.npy"), &[1, 1], &qp.b_scales[..1]).unwrap();
    let mut nan_scales = qp.a_scales.clone();
    nan_scales[3] = f32::NAN;
    npy::write_f32(&tmp(d, "as_nan.npy"), &[4, 2], &nan_scales).unwrap();
    let run = |a: &str, asc: &str, b: &str, bs: &str| {
        blockfp8(&["gemm", "--a", s(&tmp(d, a)), "--as", s(&tmp(d, asc)), "--b", s(&tmp(d, b)), "--bs", s(&tmp(d, bs)), "--out", s(&tmp(d, "c.npy")), "--backend", "cpu"])
    };
    assert!(run("a.npy", "as.npy", "b.npy", "bs.npy").status.success());
    for (case, o, needle) in [
        ("K mismatch", run("a.npy", "as.npy", "b_k.npy", "bs.npy"), "K differs"),
        ("weight scales", run("a.npy", "as.npy", "b.npy", "bs_bad.npy"), "weight scales"),
        ("NaN scale", run("a.npy", "as_nan.npy", "b.npy", "bs.npy"), "non-finite"),
        ("wrong dtype", run("as.npy", "as.npy", "b.npy", "bs.npy"), "uint8"),
        ("missing file", run("nope.npy", "as.npy", "b.npy", "bs.npy"), "nope.npy"),
    ] {
        assert!(!o.status.success(), "{case}: should fail");
        let err = stderr(&o);
        assert!(err.contains("error:") && err.contains(needle), "{case}: {err}");
        assert!(!err.contains("panicked"), "{case}: {err}");
    }
}

/// `--launches` picks the GPU timing method; the CPU backend accepts either (it has one way to
/// time), and a value that is neither is refused before any work, naming both.
#[test]
fn bench_takes_a_launch_mode_and_refuses_unknown_ones() {
    for mode in ["graph", "eager"] {
        let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "4,256,256", "--launches", mode, "--warmup", "1", "--repeats", "1", "--rounds", "1", "--no-check"]);
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        assert!(stdout(&o).contains("| 4 | 256 | 256 |"), "{mode}: {}", stdout(&o));
    }
    let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "4,256,256", "--launches", "sometimes"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("sometimes") && err.contains("graph") && err.contains("eager"), "{err}");
}

/// `--paths` times only the paths named (the JSON lists them) and refuses a name that is not a
/// path before any work, naming the valid ones.
#[test]
fn bench_times_the_paths_named_and_refuses_unknown_ones() {
    let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "4,256,256", "--paths", "kernel-default", "--warmup", "0", "--repeats", "1", "--rounds", "1", "--no-progress", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["paths"], serde_json::json!(["kernel_default"]));
    let measured: Vec<&str> = json["shapes"][0]["measurements"].as_array().unwrap().iter().map(|m| m["implementation"].as_str().unwrap()).collect();
    assert_eq!(measured, vec!["kernel_default"]);
    let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "4,256,256", "--paths", "tuned,fastest"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("fastest") && err.contains("kernel-default") && err.contains("bf16-vendor"), "{err}");
}

/// Scale arrays are checked by shape, not only by count: the transposed activation scales
/// (same count) and a 3-D array used to run and return a wrong answer with exit 0.
#[test]
fn gemm_refuses_scale_arrays_of_the_wrong_shape() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // M=6, K=256: row-major activation scales are [6, 2]; column-major [2, 8].
    let qp = random_quantized_problem(6, 128, 256, Fp8Format::E4m3fn, ScaleLayout::RowMajor, 5);
    npy::write_u8(&tmp(d, "a.npy"), &[6, 256], &qp.a).unwrap();
    npy::write_u8(&tmp(d, "b.npy"), &[128, 256], &qp.b).unwrap();
    npy::write_f32(&tmp(d, "bs.npy"), &[1, 2], &qp.b_scales).unwrap();
    npy::write_f32(&tmp(d, "as.npy"), &[6, 2], &qp.a_scales).unwrap();
    let transposed: Vec<f32> = (0..2).flat_map(|g| (0..6).map(move |r| (r, g))).map(|(r, g)| qp.a_scales[r * 2 + g]).collect();
    npy::write_f32(&tmp(d, "as_t.npy"), &[2, 6], &transposed).unwrap();
    npy::write_f32(&tmp(d, "as_3d.npy"), &[3, 2, 2], &qp.a_scales).unwrap();
    npy::write_f32(&tmp(d, "bs_t.npy"), &[2, 1], &qp.b_scales).unwrap();
    let run = |asc: &str, bs: &str, extra: &[&str]| {
        let path = |name: &str| tmp(d, name).to_string_lossy().into_owned();
        let mut args: Vec<String> = ["gemm", "--backend", "cpu", "--out-dtype", "f32"].iter().map(|x| x.to_string()).collect();
        for (flag, name) in [("--a", "a.npy"), ("--b", "b.npy"), ("--out", "c.npy"), ("--as", asc), ("--bs", bs)] {
            args.extend([flag.to_string(), path(name)]);
        }
        args.extend(extra.iter().map(|x| x.to_string()));
        blockfp8(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("as.npy", "bs.npy", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = reference_gemm_f64(&qp.problem());
    let got: Vec<f64> = npy::read(&tmp(d, "c.npy")).unwrap().into_f32("c").unwrap().into_iter().map(f64::from).collect();
    assert!(blockfp8::gemm::calc_diff(&got, &want) < 1e-9);
    for (case, asc, bs, extra, needle) in [
        ("transposed --as", "as_t.npy", "bs.npy", &[][..], "shape [2, 6], expected [6, 2]"),
        ("3-D --as", "as_3d.npy", "bs.npy", &[][..], "shape [3, 2, 2], expected [6, 2]"),
        ("transposed --bs", "as.npy", "bs_t.npy", &[][..], "shape [2, 1], expected [1, 2]"),
        // Row-major scales claimed column-major: [6, 2] is not [2, round_up(6, 4) = 8].
        ("layout claim", "as.npy", "bs.npy", &["--as-column-major"][..], "expected [2, 8], column-major"),
    ] {
        let o = run(asc, bs, extra);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{case}: {err}");
        assert!(err.contains("error:") && err.contains(needle), "{case}: {err}");
    }
}

#[test]
fn quant_refuses_one_path_for_both_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_raw_npy_f32(&tmp(d, "x.npy"), (2, 128), &vec![1.0; 256]);
    let same = tmp(d, "out.npy");
    let via_dot = d.join(".").join("out.npy");
    let o = blockfp8(&["quant", "--x", s(&tmp(d, "x.npy")), "--out-q", s(&same), "--out-s", s(&via_dot), "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--out-q and --out-s are the same file"), "{}", stderr(&o));
    assert!(!same.exists(), "nothing is written");
}

/// Flags that would be ignored are refused instead: `--batch-size` with only `--mnk`
/// products (they carry their own M), an ordinal the CPU backend does not have, M = 0.
#[test]
fn flags_that_would_be_ignored_are_refused() {
    let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "4,256,256", "--batch-size", "8", "--no-check", "--repeats", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--model"), "{}", stderr(&o));
    // With a weight shape the batch sizes apply.
    let o = blockfp8(&["bench", "--backend", "cpu", "--shape", "256,256", "--batch-size", "2", "--no-check", "--repeats", "1", "--warmup", "0", "--rounds", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("| 2 | 256 | 256 |"), "{}", stdout(&o));

    let o = blockfp8(&["bench", "--backend", "cpu", "--device", "7", "--mnk", "4,256,256"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("one device, 0; got device 7"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let o = blockfp8(&["tune", "--backend", "cpu", "--devices", "0,7", "--shape", "256,256", "--save-path", s(dir.path()), "--no-progress"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("got device 7"), "{}", stderr(&o));

    let o = blockfp8(&["config", "show", "--n", "512", "--k", "256", "--m", "0", "--device-name", "NVIDIA H200"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("at least 1"), "{}", stderr(&o));
}

#[test]
fn config_check_takes_one_file_and_fails_on_an_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let o = blockfp8(&["config", "check", s(dir.path())]);
    assert_eq!(o.status.code(), Some(1), "an empty folder must not pass: {}", stdout(&o));
    assert!(stderr(&o).contains("no config files"), "{}", stderr(&o));

    let good = dir.path().join("N=512,K=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
    std::fs::write(&good, r#"{"8": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4}}"#).unwrap();
    let bad = dir.path().join("N=1024,K=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
    std::fs::write(&bad, r#"{"8": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 256, "GROUP_SIZE_M": 1, "num_warps": 4}}"#).unwrap();
    let o = blockfp8(&["config", "check", s(&good)]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("ok") && stdout(&o).contains("1 files, 0 bad"), "{}", stdout(&o));
    let o = blockfp8(&["config", "check", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("BAD") && stdout(&o).contains("BLOCK_SIZE_K"), "{}", stdout(&o));
}

/// `bench` reports each shape on stderr as it finishes, and Ctrl-C stops after the shape in
/// flight and still prints the tables of the finished shapes (exit 130).
#[test]
fn bench_shows_progress_and_keeps_finished_shapes_on_ctrl_c() {
    let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "4,256,256", "--mnk", "8,256,256", "--no-check", "--repeats", "1", "--warmup", "0", "--rounds", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("[1/2] M=4 N=256 K=256: kernel default") && err.contains("[2/2] M=8 N=256 K=256"), "{err}");
    let o = blockfp8(&["-q", "bench", "--backend", "cpu", "--mnk", "4,256,256", "--no-check", "--repeats", "1"]);
    assert!(!stderr(&o).contains("[1/1]"), "--quiet prints no progress: {}", stderr(&o));

    // Many slow-ish shapes; interrupt once the first has finished.
    let mut args = vec!["bench", "--backend", "cpu", "--no-check", "--repeats", "3", "--warmup", "0", "--rounds", "1"];
    for _ in 0..100 {
        args.extend(["--mnk", "64,1024,2048"]);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockfp8"))
        .args(&args)
        .env_remove("BLOCKFP8_CONFIG_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    // Log lines (the missing-config warning) may come first.
    let mut before = String::new();
    while !before.lines().any(|l| l.starts_with("[1/100] M=64 N=1024 K=2048")) {
        assert!(std::io::BufRead::read_line(&mut err, &mut before).unwrap() > 0, "no progress line: {before}");
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{rest}");
    let out = stdout(&o);
    let rows = out.lines().filter(|l| l.starts_with("| 64 | 1024 | 2048 |")).count();
    assert!((1..100).contains(&rows), "finished shapes are printed, not all 100: {rows} rows\n{out}");
    assert!(out.contains("Interrupted"), "{out}");
    assert!(rest.contains(&format!("interrupted: {rows} of 100 shapes measured")), "{rest}");
}

/// `config shapes` lists what the tuner would tune, in a form `--shape` takes back, and says
/// which file serves each shape on a device; it needs no device and no shape source is an error.
#[test]
fn config_shapes_lists_the_model_shapes_and_their_files() {
    let o = blockfp8(&["config", "shapes", "--model", "deepseek-v3", "--tp-size", "8", "--device-name", "NVIDIA H200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let expected = blockfp8::tune::preset_shapes("deepseek-v3", 8).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{out}");
    for (line, shape) in lines.iter().zip(&expected) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 3, "{line}");
        assert_eq!(blockfp8::tune::parse_shape(fields[0]).unwrap().key(), shape.key(), "{line}");
        let file = blockfp8::config::dense_file_name(shape.n, shape.k, "NVIDIA_H200", "fp8_w8a8", shape.block);
        assert!(fields[2].ends_with(&file), "every tp-8 shape ships an H200 file: {line}");
    }
    // A block other than 128x128 round-trips through --shape; an unknown device has no file.
    let o = blockfp8(&["config", "shapes", "--shape", "256,512,64,64", "--shape", "7168,2048", "--device-name", "Unknown GPU"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "256,512,64,64\t-\tnone\n7168,2048\t-\tnone\n");
    assert!(!stderr(&o).contains("sub-optimal"), "a miss is the `none` printed: {}", stderr(&o));
    let o = blockfp8(&["config", "shapes", "--shape", "7168,2048"]);
    assert_eq!(stdout(&o), "7168,2048\t-\n");
    let o = blockfp8(&["config", "shapes"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no shapes"), "{}", stderr(&o));
    let o = blockfp8(&["config", "shapes", "--model", "llama", "--tp-size", "8"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown model preset"), "{}", stderr(&o));
}

/// Output cut short by the reader (`blockfp8 config check DIR | head -1`) ends the process as it
/// ends other Unix tools, without a panic on the broken pipe.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_process_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockfp8"))
        .args(["config", "check", "configs"])
        .env_remove("BLOCKFP8_CONFIG_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run blockfp8");
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.signal(), Some(13), "ended by SIGPIPE: {:?} {err}", o.status);
}

/// A tune is there to write the files that are missing: it does not warn that they are missing,
/// nor tell the user to run the tune it is running.
#[test]
fn tune_does_not_warn_of_the_file_it_is_writing() {
    let dir = tempfile::tempdir().unwrap();
    let o = blockfp8(&["tune", "--backend", "cpu", "--shape", "256,256", "--batch-size", "1", "--save-path", s(dir.path()), "--no-progress"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("sub-optimal") && !stderr(&o).contains("blockfp8 tune --shape"), "{}", stderr(&o));
    let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| n.starts_with("N=256,K=256,")).collect();
    assert_eq!(written.len(), 1, "{written:?}");
    // The plain GEMM of a shape without a file still warns, once.
    let o = blockfp8(&["bench", "--backend", "cpu", "--mnk", "1,256,384", "--no-check", "--repeats", "1", "--warmup", "0", "--rounds", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("sub-optimal").count(), 1, "{}", stderr(&o));
}
