//! Compiles tests/c/test_capi.c against include/blockfp8.h and this build's cdylib with the
//! system C compiler (`$CC`, else `cc`) and runs it: the C ABI exercised from C on the CPU
//! backend.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn c_program_passes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    // target/<profile>/deps/c_program-<hash> -> target/<profile>, where cargo puts the cdylib.
    let exe = std::env::current_exe().unwrap();
    let lib_dir = exe.parent().and_then(|p| p.parent()).unwrap().to_path_buf();
    // `cargo test` builds the library as an rlib for the tests, not its cdylib: build that
    // (same profile and features; fast when up to date).
    let mut build = Command::new(env!("CARGO"));
    build.current_dir(&root).args(["build", "-p", "blockfp8-capi"]);
    if lib_dir.file_name().is_some_and(|p| p == "release") {
        build.arg("--release");
    }
    for (on, feature) in [(cfg!(feature = "cuda"), "cuda"), (cfg!(feature = "rocm"), "rocm")] {
        if on {
            build.args(["--features", feature]);
        }
    }
    assert!(build.status().expect("running cargo").success(), "cargo build -p blockfp8-capi failed");
    let lib = lib_dir.join(format!("{}blockfp8_capi{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX));
    assert!(lib.exists(), "{} was not built", lib.display());
    let out = std::env::temp_dir().join(format!("blockfp8_test_capi_{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/test_capi.c"))
        .arg("-o")
        .arg(&out)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-lblockfp8_capi", "-lm"])
        .status()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(status.success(), "compiling tests/c/test_capi.c failed");
    let run = Command::new(&out).output().unwrap();
    let _ = std::fs::remove_file(&out);
    let stdout = String::from_utf8_lossy(&run.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "the C test program failed: {stdout}");
    assert!(stdout.contains(" passed, 0 failed"), "unexpected summary: {stdout}");
}
