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
