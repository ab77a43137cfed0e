//! `blockfp8 quant` and `blockfp8 gemm`: .npy in, .npy out.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use blockfp8::config::Library;
use blockfp8::gemm::{ActScales, BlockScaledGemm, GemmProblem, GemmShape, OutDtype};
use blockfp8::{npy, Error, Fp8Format, HostOps, Result, ScaleLayout, TokenQuantOptions};

use super::{parse_fp8, parse_pair, BackendArgs};

#[derive(Args, Debug)]
pub struct QuantArgs {
    /// Activations [M, K]: float32, or bf16 bit patterns as uint16.
    #[arg(long)]
    x: PathBuf,
    /// Output fp8 bit patterns [M, K] (uint8).
    #[arg(long)]
    out_q: PathBuf,
    /// Output scales (float32): [M, ceil(K/group)], or [ceil(K/group), round_up(M, 4)] with --column-major.
    #[arg(long)]
    out_s: PathBuf,
    #[arg(long, default_value_t = 128)]
    group: usize,
    /// e4m3fn (OCP; NVIDIA, gfx950) or e4m3fnuz (gfx942).
    #[arg(long, value_parser = parse_fp8, default_value = "e4m3fn")]
    fp8: Fp8Format,
    /// Value the group amax maps to (default: 448 for e4m3fn, 224 for e4m3fnuz).
    #[arg(long)]
    fp8_max: Option<f32>,
    /// M-major scales, rows padded to a multiple of 4 (TMA-aligned).
    #[arg(long)]
    column_major: bool,
    /// Power-of-two (UE8M0) scales.
    #[arg(long)]
    ue8m0: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Whether two output paths name the same file (also through `.` or a symlinked folder),
/// where the second write would replace the first.
fn same_file(a: &Path, b: &Path) -> bool {
    let resolve = |p: &Path| -> PathBuf {
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        match (std::fs::canonicalize(parent), p.file_name()) {
            (Ok(dir), Some(name)) => dir.join(name),
            _ => p.to_path_buf(),
        }
    };
    a == b || resolve(a) == resolve(b)
}

pub fn quant(a: QuantArgs) -> Result<ExitCode> {
    if same_file(&a.out_q, &a.out_s) {
        return Ok(super::usage_error(&format!("--out-q and --out-s are the same file ({}): the scales would overwrite the fp8 data", a.out_q.display())));
    }
    let arr = npy::read(&a.x)?;
    let (m, k) = arr.dims2("--x")?;
    let x = arr.into_f32_from_f32_or_bf16("--x")?;
    let opts = TokenQuantOptions {
        group: a.group,
        format: a.fp8,
        fp8_max: a.fp8_max,
        layout: if a.column_major { ScaleLayout::ColumnMajor } else { ScaleLayout::RowMajor },
        ue8m0: a.ue8m0,
    };
    let backend = a.backend.open()?;
    let q = backend.quantize_tokens(&x, m, k, &opts)?;
    let s_shape = match q.layout {
        ScaleLayout::RowMajor => [m, q.groups()],
        ScaleLayout::ColumnMajor => [q.groups(), q.padded_m()],
    };
    npy::write_u8(&a.out_q, &[m, k], &q.q)?;
    npy::write_f32(&a.out_s, &s_shape, &q.scales)?;
    log::info!("quantized [{m}, {k}] on {} into {} and {}", backend.device().name, a.out_q.display(), a.out_s.display());
    Ok(ExitCode::SUCCESS)
}

#[derive(Args, Debug)]
pub struct GemmArgs {
    /// fp8 activations [M, K] (uint8 bit patterns).
    #[arg(long)]
    a: PathBuf,
    /// Activation scales (float32) [M, ceil(K/block_k)], or column-major with --as-column-major.
    #[arg(long = "as")]
    a_scales: PathBuf,
    /// The activation scales are M-major [ceil(K/block_k), round_up(M, 4)].
    #[arg(long)]
    as_column_major: bool,
    /// fp8 weights [N, K] (uint8 bit patterns).
    #[arg(long)]
    b: PathBuf,
    /// Weight scales (float32) [ceil(N/block_n), ceil(K/block_k)].
    #[arg(long = "bs")]
    b_scales: PathBuf,
    /// Output [M, N]: float32, float16, or bf16 bit patterns as uint16.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_parser = parse_fp8, default_value = "e4m3fn")]
    fp8: Fp8Format,
    #[arg(long, default_value = "bf16")]
    out_dtype: OutDtype,
    /// Weight block shape block_n,block_k.
    #[arg(long, value_parser = parse_pair, default_value = "128,128")]
    block_shape: (usize, usize),
    #[command(flatten)]
    backend: BackendArgs,
}

pub fn gemm(a: GemmArgs) -> Result<ExitCode> {
    let arr_a = npy::read(&a.a)?;
    let (m, k) = arr_a.dims2("--a")?;
    let a_bytes = arr_a.into_u8("--a")?;
    let arr_b = npy::read(&a.b)?;
    let (n, kb) = arr_b.dims2("--b")?;
    let b_bytes = arr_b.into_u8("--b")?;
    if kb != k {
        return Err(Error::shape("gemm", format!("A is [{m}, {k}] but B is [{n}, {kb}]: K differs")));
    }
    let shape = GemmShape { m, n, k, block: a.block_shape, format: a.fp8, out_dtype: a.out_dtype };
    shape.check_size("gemm")?;
    let layout = if a.as_column_major { ScaleLayout::ColumnMajor } else { ScaleLayout::RowMajor };
    // The full shape, not just the count: a transposed array of the right size would be
    // read with the wrong strides and give a wrong answer without any error.
    let (want_as, as_layout) = match layout {
        ScaleLayout::RowMajor => ([m, shape.k_blocks()], "row-major [M, ceil(K/block_k)]"),
        ScaleLayout::ColumnMajor => ([shape.k_blocks(), shape.padded_m()], "column-major [ceil(K/block_k), round_up(M, 4)] (--as-column-major)"),
    };
    let a_scales = read_scales(&a.a_scales, "--as (activation scales)", want_as, as_layout)?;
    let b_scales = read_scales(&a.b_scales, "--bs (weight scales)", [shape.n_blocks(), shape.k_blocks()], "[ceil(N/block_n), ceil(K/block_k)]")?;
    let problem = GemmProblem { shape, a: &a_bytes, a_scales: ActScales { data: &a_scales, layout }, b: &b_bytes, b_scales: &b_scales };
    let backend = a.backend.open()?;
    let gemm = BlockScaledGemm::new(backend, std::sync::Arc::new(Library::from_env()));
    let out = gemm.run(&problem)?;
    npy::write_output(&a.out, &[m, n], &out)?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a float32 scale array and checks its shape is exactly `want` (`layout` names it
/// for the message).
fn read_scales(path: &Path, what: &str, want: [usize; 2], layout: &str) -> Result<Vec<f32>> {
    let arr = npy::read(path)?;
    if arr.shape != want {
        return Err(Error::shape("gemm", format!("{what} {}: shape {:?}, expected {want:?}, {layout}", path.display(), arr.shape)));
    }
    arr.into_f32(what)
}
