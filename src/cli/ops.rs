//! `blockfp8 quant` and `blockfp8 gemm`: .npy in, .npy out.

use std::path::PathBuf;
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

pub fn quant(a: QuantArgs) -> Result<ExitCode> {
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
    let a_scales = npy::read(&a.a_scales)?.into_f32("--as")?;
    let b_scales = npy::read(&a.b_scales)?.into_f32("--bs")?;
    let shape = GemmShape { m, n, k, block: a.block_shape, format: a.fp8, out_dtype: a.out_dtype };
    let layout = if a.as_column_major { ScaleLayout::ColumnMajor } else { ScaleLayout::RowMajor };
    let problem = GemmProblem { shape, a: &a_bytes, a_scales: ActScales { data: &a_scales, layout }, b: &b_bytes, b_scales: &b_scales };
    let backend = a.backend.open()?;
    let gemm = BlockScaledGemm::new(backend, std::sync::Arc::new(Library::from_env()));
    let out = gemm.run(&problem)?;
    npy::write_output(&a.out, &[m, n], &out)?;
    Ok(ExitCode::SUCCESS)
}
