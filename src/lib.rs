//! `blockfp8`: block-scaled W8A8 FP8 matrix multiplication (DeepSeek-V3 style, 1x128
//! activation scales and 128x128 weight scales) with quantization kernels.
//!
//! The path of one product:
//! ```text
//! x [M,K] --quant::quantize_per_token_group--> (xq fp8 [M,K], xs f32 [M, K/128])
//! (xq, xs, wq [N,K], ws [N/128, K/128]) --gemm::BlockScaledGemm::run--> y [M,N]
//!     plan: config::Library::lookup(device, N, K) -> tuned table | miss
//!           table.nearest(M) -> KernelConfig
//!           path = Tuned | Vendor (rocBLAS / cuBLASLt) | KernelDefault  (reason logged once)
//!     run:  the backend launches the chosen path
//! ```
//! Backends: `cpu` (the reference, always present), `hip` (feature `rocm`), `cuda` (feature `cuda`).
//!
//! The device API (what an inference engine calls: weights prepared once, work enqueued on the
//! caller's stream, no host round trip):
//!
//! ```
//! use blockfp8::{Context, GemmSpec, OutDtype, ScaleLayout, TokenQuantOptions};
//! use half::bf16;
//!
//! # fn main() -> blockfp8::Result<()> {
//! let (m, n, k) = (3, 256, 200);
//! let ctx = Context::best_available(); // ROCm, then CUDA, then the CPU
//! let stream = ctx.new_stream()?;
//! let fp8 = ctx.fp8(); // e4m3fnuz on gfx942, e4m3fn elsewhere
//!
//! // Once, at load time: the weight quantized on the device from bf16.
//! let w: Vec<bf16> = (0..n * k).map(|i| bf16::from_f32(((i % 13) as f32 - 6.0) * 0.01)).collect();
//! let w_dev = ctx.upload(&stream, &w)?;
//! let weight = ctx.quantize_weight(&stream, w_dev.view(), n, k)?;
//! let plan = ctx.gemm_plan(GemmSpec { n, k, block: (128, 128), format: fp8, out_dtype: OutDtype::Bf16, a_layout: ScaleLayout::RowMajor, max_m: 64 })?;
//!
//! // Per step: quantize activations and multiply, all enqueued on `stream`.
//! let x: Vec<bf16> = (0..m * k).map(|i| bf16::from_f32((i % 17) as f32 - 8.0)).collect();
//! let x_dev = ctx.upload(&stream, &x)?;
//! let mut xq = ctx.alloc::<u8>(m * k)?;
//! let mut xs = ctx.alloc::<f32>(m * k.div_ceil(128))?;
//! ctx.quantize_tokens(&stream, x_dev.view(), m, k, &TokenQuantOptions::new(fp8), &mut xq.view_mut(), &mut xs.view_mut())?;
//! let mut y = ctx.alloc::<bf16>(m * n)?;
//! plan.enqueue(&stream, xq.view(), xs.view(), &weight, &mut y.view_mut())?;
//!
//! let y_host = ctx.download(&stream, y.view())?; // waits for the stream
//! assert_eq!(y_host.len(), m * n);
//! # Ok(())
//! # }
//! ```
//!
//! The host-slice API (`BlockScaledGemm::run`, [`HostOps`]) wraps the same path.

// Value types (leaves).
pub mod error;
pub mod formats;
pub mod types;
pub mod problem;
pub mod memory;
pub mod stream;

pub mod config;
pub mod device;
pub mod quant;
pub mod backend;

// The device API, and the host API over it.
pub mod context;
pub mod plan;
pub mod weight;
pub mod gemm;

pub mod bench;
pub mod npy;
pub mod tune;

pub use backend::{Backend, BackendKind, HostOps};
pub use context::Context;
pub use device::Device;
pub use error::{Error, Result};
pub use formats::Fp8Format;
pub use gemm::BlockScaledGemm;
pub use memory::{DeviceBuffer, DeviceElem, DeviceView, DeviceViewMut, QuantInput};
pub use plan::{DefaultPath, GemmPlan, GemmSpec, DEFAULT_PATH_ENV};
pub use problem::{ActScales, GemmProblem, Output};
pub use quant::{QuantizedTokens, QuantizedWeight, TokenQuantOptions};
pub use stream::Stream;
pub use types::{DeviceId, GemmPath, GemmShape, InputDtype, OutDtype, ScaleLayout};
pub use weight::PreparedWeight;
