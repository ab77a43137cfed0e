//! `blockfp8`: the command-line tool, a thin layer over the library.

use clap::Parser;

mod cli;

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so `blockfp8 config check DIR | head` would panic on the closed
    // pipe; with the default action the tool ends quietly, as other Unix tools do.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(args.log_level())).init();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
