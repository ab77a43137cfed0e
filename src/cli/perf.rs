//! `blockfp8 bench` and `blockfp8 tune` (wired to the library's bench and tune modules).

use std::process::ExitCode;

use clap::Args;

use blockfp8::Result;

#[derive(Args, Debug)]
pub struct BenchArgs {}

#[derive(Args, Debug)]
pub struct TuneArgs {}

pub fn bench(_a: BenchArgs) -> Result<ExitCode> {
    Err(blockfp8::Error::invalid("bench", "not available in this build yet"))
}

pub fn tune(_a: TuneArgs) -> Result<ExitCode> {
    Err(blockfp8::Error::invalid("tune", "not available in this build yet"))
}
