//! `blockfp8 info`

use std::process::ExitCode;

use blockfp8::{BackendKind, Result};

pub fn run() -> Result<ExitCode> {
    let compiled: Vec<&str> = [BackendKind::Cpu, BackendKind::Rocm, BackendKind::Cuda].iter().filter(|k| k.compiled()).map(|k| k.name()).collect();
    println!("blockfp8 {}", env!("CARGO_PKG_VERSION"));
    println!("backends compiled in: {}", compiled.join(", "));
    println!();
    println!("{:<7} {:>3}  {:<32} {:<34} {:<10} {:<9} {:>5}", "backend", "#", "name", "config name", "arch", "fp8", "units");
    for d in blockfp8::backend::devices() {
        println!(
            "{:<7} {:>3}  {:<32} {:<34} {:<10} {:<9} {:>5}",
            d.backend.name(),
            d.ordinal,
            d.name,
            d.config_name(),
            d.arch,
            format!("{:?}", d.fp8).to_lowercase(),
            d.compute_units
        );
    }
    Ok(ExitCode::SUCCESS)
}
