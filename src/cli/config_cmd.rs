//! `blockfp8 config filename|show|check|merge`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use blockfp8::config::library::Lookup;
use blockfp8::config::{self, Library};
use blockfp8::device::config_name_for;
use blockfp8::{tune, Result};

use super::parse_pair;

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print the file name vLLM/SGLang use for a shape and device.
    Filename {
        #[arg(long)]
        n: usize,
        #[arg(long)]
        k: usize,
        /// Device name as reported ("AMD Instinct MI300X", "NVIDIA H200").
        #[arg(long)]
        device_name: String,
        #[arg(long, default_value = "fp8_w8a8")]
        dtype: String,
        #[arg(long, value_parser = parse_pair, default_value = "128,128")]
        block_shape: (usize, usize),
    },
    /// Print the entry chosen for batch size M as one JSON object.
    Show {
        #[arg(long)]
        n: usize,
        #[arg(long)]
        k: usize,
        /// Batch size (>= 1).
        #[arg(long, value_parser = super::parse_positive)]
        m: usize,
        #[arg(long)]
        device_name: String,
        /// Look only in this folder (default: $BLOCKFP8_CONFIG_DIR, then the shipped configs).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[arg(long, default_value = "fp8_w8a8")]
        dtype: String,
        #[arg(long, value_parser = parse_pair, default_value = "128,128")]
        block_shape: (usize, usize),
    },
    /// Validate every config file in a folder, or one file; exit 1 if any is bad or none is found.
    Check {
        /// A folder of config files, or one config file.
        path: PathBuf,
    },
    /// List the weight shapes a model needs config files for, one a line: the `--shape`
    /// argument (N,K), a tab, its layers; with --device-name, a tab and the file that serves
    /// it ("none" where the vendor BLAS would run). Opens no device.
    Shapes {
        #[command(flatten)]
        shapes: super::perf::ShapeArgs,
        /// Device name as reported ("AMD Instinct MI300X", "NVIDIA H200").
        #[arg(long)]
        device_name: Option<String>,
        #[arg(long, default_value = "fp8_w8a8")]
        dtype: String,
    },
    /// Join the outputs of tuning shards (`blockfp8 tune --shard I/N`) into one folder.
    Merge(super::perf::MergeArgs),
}

pub fn run(cmd: ConfigCommand) -> Result<ExitCode> {
    match cmd {
        ConfigCommand::Filename { n, k, device_name, dtype, block_shape } => {
            println!("{}", config::dense_file_name(n, k, &config_name_for(&device_name), &dtype, block_shape));
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Show { n, k, m, device_name, dir, dtype, block_shape } => {
            // A miss is this command's answer, printed below with every place tried.
            let lib = match dir {
                Some(d) => Library::new(vec![d], false, false),
                None => Library::from_env(),
            }
            .expecting_misses();
            let dev = config_name_for(&device_name);
            match lib.lookup_verbose(&dev, n, k, &dtype, block_shape) {
                Lookup::Found { table, source, .. } => {
                    let (key, cfg) = table.nearest(m).expect("parsed tables are never empty");
                    log::info!("{source}: entry {key} for M={m}");
                    println!("{}", serde_json::to_string(cfg).expect("a KernelConfig serializes"));
                    if let Some(note) = cfg.provenance_note() {
                        eprintln!("{source}: entry {key} is {note}");
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Lookup::Missing { file_name, tried } => {
                    eprintln!("no usable config file {file_name}; tried:");
                    for attempt in tried {
                        eprintln!("  {attempt}");
                    }
                    Ok(ExitCode::FAILURE)
                }
                Lookup::BatchInvariant => {
                    eprintln!("BLOCKFP8_BATCH_INVARIANT is set: tuned files are ignored");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        ConfigCommand::Shapes { shapes, device_name, dtype } => {
            let shapes = shapes.spec().resolve()?;
            let lib = Library::from_env().expecting_misses(); // a miss is the "none" it prints
            for shape in &shapes {
                let text = tune::shape_line(shape);
                match &device_name {
                    None => println!("{text}"),
                    Some(name) => {
                        let served = match lib.lookup_verbose(&config_name_for(name), shape.n, shape.k, &dtype, shape.block) {
                            Lookup::Found { source, .. } => source.to_string(),
                            Lookup::Missing { .. } => "none".to_string(),
                            Lookup::BatchInvariant => "none (BLOCKFP8_BATCH_INVARIANT)".to_string(),
                        };
                        println!("{text}\t{served}");
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Merge(args) => super::perf::merge(args),
        ConfigCommand::Check { path } => {
            let results = match path.file_name().map(|n| n.to_string_lossy().into_owned()) {
                Some(name) if path.is_file() => vec![(path.clone(), config::library::check_file(&path, &name))],
                _ => config::library::check_dir(&path),
            };
            // A folder without config files is almost always the wrong folder.
            if results.is_empty() {
                eprintln!("error: no config files (*.json) in {}", path.display());
                return Ok(ExitCode::FAILURE);
            }
            let mut bad = 0;
            for (path, r) in &results {
                match r {
                    Ok(summary) => println!("ok   {}  {summary}", path.display()),
                    Err(why) => {
                        bad += 1;
                        println!("BAD  {}  {why}", path.display())
                    }
                }
            }
            println!("{} files, {} bad", results.len(), bad);
            Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
    }
}
