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
//! ```
//! use std::sync::Arc;
//! use blockfp8::{backend, config::Library, ActScales, BlockScaledGemm, GemmProblem, OutDtype, TokenQuantOptions};
//! use blockfp8::gemm::GemmShape;
//!
//! # fn main() -> blockfp8::Result<()> {
//! let (m, n, k) = (3, 256, 200);
//! let x: Vec<f32> = (0..m * k).map(|i| (i % 17) as f32 - 8.0).collect();
//! let w: Vec<f32> = (0..n * k).map(|i| ((i % 13) as f32 - 6.0) * 0.01).collect();
//!
//! let backend = backend::best_available(); // ROCm, then CUDA, then the CPU
//! let format = backend.device().fp8; // e4m3fnuz on gfx942, e4m3fn elsewhere
//! let xq = backend.quantize_tokens(&x, m, k, &TokenQuantOptions::new(format))?;
//! let wq = backend.quantize_weight(&w, n, k, (128, 128), format)?;
//!
//! let gemm = BlockScaledGemm::new(backend, Arc::new(Library::from_env()));
//! let y = gemm.run(&GemmProblem {
//!     shape: GemmShape { m, n, k, block: (128, 128), format, out_dtype: OutDtype::Bf16 },
//!     a: &xq.q,
//!     a_scales: ActScales { data: &xq.scales, layout: xq.layout },
//!     b: &wq.q,
//!     b_scales: &wq.scales,
//! })?;
//! assert_eq!(y.len(), m * n);
//! # Ok(())
//! # }
//! ```

pub mod backend;
pub mod bench;
pub mod config;
pub mod device;
pub mod error;
pub mod formats;
pub mod gemm;
pub mod npy;
pub mod quant;
pub mod tune;

pub use backend::{Backend, BackendKind};
pub use device::Device;
pub use error::{Error, Result};
pub use formats::Fp8Format;
pub use gemm::{ActScales, BlockScaledGemm, GemmPath, GemmProblem, OutDtype, Output};
pub use quant::{QuantizedTokens, QuantizedWeight, ScaleLayout, TokenQuantOptions};
