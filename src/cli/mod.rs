//! Argument definitions and dispatch. Each subcommand lives in its own file.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use blockfp8::{BackendKind, Fp8Format, Result};

mod config_cmd;
mod info;
mod ops;
mod perf;
mod progress;

#[derive(Parser, Debug)]
#[command(name = "blockfp8", version, about = "Block-scaled W8A8 FP8 GEMM: kernels, tuned configs, tuner and benchmark")]
pub struct Cli {
    /// More log output (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

impl Cli {
    pub fn log_level(&self) -> &'static str {
        match (self.quiet, self.verbose) {
            (true, _) => "error",
            (false, 0) => "warn",
            (false, 1) => "info",
            _ => "debug",
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Devices, compiled-in backends, config names, architectures and fp8 flavours.
    Info,
    /// Tuned-config files: names, lookups, validation, merging.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// Quantize activations per token per K group (.npy in, .npy out).
    Quant(ops::QuantArgs),
    /// Block-scaled GEMM C = (A, As) x (B, Bs)^T (.npy in, .npy out).
    Gemm(ops::GemmArgs),
    /// Benchmark the GEMM paths side by side (the main job).
    Bench(perf::BenchArgs),
    /// Tune kernel configs and write vLLM-format files.
    Tune(perf::TuneArgs),
}

/// `--backend` and `--device` shared by the commands that compute.
#[derive(Args, Debug, Clone)]
pub struct BackendArgs {
    /// cpu, cuda or rocm; default: the best compiled-in backend with a device.
    #[arg(long)]
    backend: Option<BackendKind>,
    /// Device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
}

impl BackendArgs {
    pub fn open(&self) -> Result<std::sync::Arc<dyn blockfp8::Backend>> {
        let kind = match self.backend {
            Some(kind) => kind,
            // The best backend on device 0; another ordinal must be opened (and checked) on it.
            None if self.device == 0 => return Ok(blockfp8::backend::best_available()),
            None => blockfp8::backend::best_available().kind(),
        };
        check_ordinal(kind, self.device)?;
        blockfp8::backend::open(kind, self.device)
    }
}

/// The CPU backend is one device; any other ordinal would be ignored, so refuse it.
pub fn check_ordinal(kind: BackendKind, ordinal: usize) -> Result<()> {
    if kind == BackendKind::Cpu && ordinal != 0 {
        return Err(blockfp8::Error::BackendUnavailable { backend: "cpu", reason: format!("the CPU backend has one device, 0; got device {ordinal}") });
    }
    Ok(())
}

/// A usage error found after parsing (flags that contradict each other): the message on
/// stderr and exit code 2, as clap does for the errors it finds itself.
pub fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// A count that must be at least 1 (batch sizes, M).
pub fn parse_positive(s: &str) -> std::result::Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

pub fn parse_fp8(s: &str) -> std::result::Result<Fp8Format, String> {
    match s {
        "e4m3fn" | "fn" => Ok(Fp8Format::E4m3fn),
        "e4m3fnuz" | "fnuz" => Ok(Fp8Format::E4m3fnuz),
        _ => Err(format!("{s:?}: expected e4m3fn or e4m3fnuz")),
    }
}

/// "128,128" -> (128, 128)
pub fn parse_pair(s: &str) -> std::result::Result<(usize, usize), String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [a, b] => {
            let a = a.parse::<usize>().map_err(|e| format!("{s:?}: {e}"))?;
            let b = b.parse::<usize>().map_err(|e| format!("{s:?}: {e}"))?;
            if a == 0 || b == 0 {
                return Err(format!("{s:?}: sizes must be positive"));
            }
            Ok((a, b))
        }
        _ => Err(format!("{s:?}: expected two comma-separated numbers, e.g. 128,128")),
    }
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Info => info::run(),
        Command::Config(c) => config_cmd::run(c),
        Command::Quant(a) => ops::quant(a),
        Command::Gemm(a) => ops::gemm(a),
        Command::Bench(a) => perf::bench(a, cli.quiet),
        Command::Tune(a) => perf::tune(a),
    }
}
