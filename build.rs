//! Build script: embeds the shipped configs, and compiles GPU kernels for the enabled
//! backend (`hip/build_hip.rs` for feature `rocm`, `cuda/build_cuda.rs` for feature `cuda`).

use std::path::PathBuf;

#[cfg(feature = "cuda")]
#[path = "cuda/build_cuda.rs"]
mod build_cuda;
#[cfg(feature = "rocm")]
#[path = "hip/build_hip.rs"]
mod build_hip;

fn main() {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    embed_configs(&out_dir);
    #[cfg(feature = "rocm")]
    build_hip::build(&out_dir);
    #[cfg(feature = "cuda")]
    build_cuda::build(&out_dir);
}

/// Writes `OUT_DIR/embedded_configs.rs`: `pub static EMBEDDED: &[(&str, &str)]` of
/// (file name, contents) for every `configs/*.json`, so a deployed binary carries them.
fn embed_configs(out_dir: &std::path::Path) {
    println!("cargo:rerun-if-changed=configs");
    let mut files: Vec<PathBuf> = std::fs::read_dir("configs")
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    let mut src = String::from("pub static EMBEDDED: &[(&str, &str)] = &[\n");
    for f in &files {
        let abs = std::fs::canonicalize(f).expect("config path");
        let name = f.file_name().unwrap().to_string_lossy();
        src += &format!("    ({:?}, include_str!({:?})),\n", name, abs.display().to_string());
    }
    src += "];\n";
    std::fs::write(out_dir.join("embedded_configs.rs"), src).expect("write embedded_configs.rs");
}
