//! Sizes past the GPU kernels' 32-bit limits (or past usize) are refused before anything
//! is allocated: by the library's bench and tuner, and by `blockfp8 bench` / `tune`, quickly
//! and with the limit named (not an allocation abort, a capacity-overflow panic, or a
//! minute of work before the same error).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use blockfp8::backend::cpu::CpuBackend;
use blockfp8::backend::Backend;
use blockfp8::bench::{self, BenchOptions, BenchShape};
use blockfp8::gemm::{GemmShape, OutDtype};
use blockfp8::tune::{self, TuneOptions, WeightShape};
use blockfp8::Fp8Format;

const LIMIT: usize = i32::MAX as usize;

fn shape(m: usize, n: usize, k: usize) -> GemmShape {
    GemmShape { m, n, k, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 }
}

#[test]
fn check_size_names_the_operand_past_the_limit() {
    assert!(shape(1, 1, 1).check_size("t").is_ok());
    // Exactly 2^31-1 elements is allowed, one more is not.
    assert!(shape(LIMIT, 1, 1).check_size("t").is_ok());
    for (s, operand) in [(shape(LIMIT + 1, 1, 1), "A"), (shape(1, LIMIT + 1, 1), "B"), (shape(1 << 16, 1 << 16, 1), "C"), (shape(usize::MAX, 1, 2), "A")] {
        let e = s.check_size("t").unwrap_err().to_string();
        assert!(e.contains(&format!("{operand} has more than 2^31-1 elements")), "{s:?}: {e}");
    }
    assert!(shape(0, 1, 1).check_size("t").unwrap_err().to_string().contains(">= 1"));
}

/// A too-large shape listed after a good one fails before the good one is measured: the
/// whole list is checked first (and no input of either is allocated: 2^64-1 rows would
/// abort the process).
#[test]
fn library_bench_refuses_oversized_shapes_before_any_work() {
    let cpu = CpuBackend::new();
    for bad in [BenchShape { m: usize::MAX, n: 1, k: 1 }, BenchShape { m: 100_000_000, n: 100_000, k: 100_000 }, BenchShape { m: 1 << 31, n: 1, k: 1 }] {
        let started = Instant::now();
        let opts = BenchOptions::new(vec![BenchShape { m: 64, n: 512, k: 512 }, bad]);
        let mut measured = 0;
        let e = bench::run_with(&cpu, None, &opts, &mut |_, _| {
            measured += 1;
            true
        })
        .unwrap_err();
        assert!(e.to_string().contains("2^31-1"), "{bad:?}: {e}");
        assert_eq!(measured, 0, "{bad:?}: a shape was measured before the size check");
        assert!(started.elapsed() < Duration::from_secs(5), "{bad:?}: took {:?}", started.elapsed());
    }
}

#[test]
fn library_tune_refuses_oversized_shapes_before_writing_anything() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("out");
    // N*K fits, but M*K at the largest batch size (4096) does not.
    let shapes = vec![WeightShape::new(256, 256, (128, 128)), WeightShape::new(128, 1 << 20, (128, 128))];
    let mut o = TuneOptions::new(shapes, save.clone());
    o.progress = false;
    let backends: Vec<Arc<dyn Backend>> = vec![Arc::new(CpuBackend::new())];
    let e = tune::tune(&backends, &o).unwrap_err();
    assert!(e.to_string().contains("A has more than 2^31-1 elements"), "{e}");
    assert!(!save.exists(), "nothing may be created for a run that cannot happen");
    let mut huge = TuneOptions::new(vec![WeightShape::new(usize::MAX, 2, (128, 128))], save.clone());
    huge.progress = false;
    assert!(tune::tune(&backends, &huge).unwrap_err().to_string().contains("B has more than 2^31-1 elements"));
}

/// Runs the binary, killing it after `limit` (today's code took minutes, or aborted).
fn run_with_deadline(args: &[&str], cwd: &Path, limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockfp8"))
        .args(args)
        .current_dir(cwd)
        .env_remove("BLOCKFP8_CONFIG_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run blockfp8");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!("{args:?} still running after {limit:?}; stderr: {}", String::from_utf8_lossy(&o.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn cli_bench_and_tune_refuse_oversized_shapes_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 6] = [
        &["bench", "--backend", "cpu", "--mnk", "100000000,100000,100000"],
        &["bench", "--backend", "cpu", "--mnk", "18446744073709551615,1,1"],
        &["bench", "--backend", "cpu", "--mnk", "100000,100000,100000"],
        &["bench", "--backend", "cpu", "--mnk", "64,256,256", "--mnk", "2147483648,1,1"],
        &["tune", "--backend", "cpu", "--shape", "18446744073709551615,1", "--save-path", "t1", "--no-progress"],
        &["tune", "--backend", "cpu", "--shape", "1048576,4096", "--batch-size", "1", "--save-path", "t2", "--no-progress"],
    ];
    for args in cases {
        let o = run_with_deadline(args, dir.path(), Duration::from_secs(20));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("error:") && err.contains("2^31-1"), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: no table for a run that did not happen");
    }
    assert!(!dir.path().join("t1").exists() && !dir.path().join("t2").exists());
}
