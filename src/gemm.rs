//! The host-slice GEMM: C\[M,N\] = (A, As) x (B, Bs)^T from host buffers, as a thin wrapper over
//! the device API (upload, [`GemmPlan::enqueue`](crate::GemmPlan::enqueue), download). Shapes
//! and scale values are checked here, once, for every backend; the path is the plan's (tuned
//! kernel, vendor BLAS, kernel default), chosen once per (device, N, K, M-entry) and logged once.

use std::sync::Arc;

use crate::backend::Backend;
use crate::config::Library;
use crate::context::Context;
use crate::error::Result;
use crate::memory::DeviceElem;
use crate::plan::GemmSpec;
pub use crate::problem::{calc_diff, ActScales, GemmProblem, Output};
pub use crate::types::{GemmPath, GemmShape, OutDtype};

/// Plans and runs products on one device, with one config library.
pub struct BlockScaledGemm {
    context: Context,
}

impl BlockScaledGemm {
    pub fn new(backend: Arc<dyn Backend>, library: Arc<Library>) -> Self {
        BlockScaledGemm { context: Context::new(backend, library) }
    }

    /// Over an existing context (sharing its plans).
    pub fn from_context(context: Context) -> Self {
        BlockScaledGemm { context }
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        self.context.backend()
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The path a product of `shape` takes: tuned file entry -> its config (or the vendor path
    /// it records); no file -> the no-file default (vendor BLAS unless `BLOCKFP8_DEFAULT_PATH`
    /// says kernel); a path the backend cannot serve -> the kernel default.
    pub fn plan(&self, shape: &GemmShape) -> GemmPath {
        self.context.path_chooser().choose(shape)
    }

    /// Validates, plans and runs.
    pub fn run(&self, p: &GemmProblem) -> Result<Output> {
        p.validate()?;
        let s = p.shape;
        let ctx = &self.context;
        let spec = GemmSpec { n: s.n, k: s.k, block: s.block, format: s.format, out_dtype: s.out_dtype, a_layout: p.a_scales.layout, max_m: s.m };
        let plan = ctx.gemm_plan(spec)?;
        let stream = ctx.new_stream()?;
        let weight = ctx.prepare_weight(&stream, p.b, p.b_scales, s.n, s.k, s.block, s.format)?;
        let a = ctx.upload(&stream, p.a)?;
        let a_scales = ctx.upload(&stream, p.a_scales.data)?;
        fn run_typed<T: DeviceElem>(ctx: &Context, plan: &crate::GemmPlan, stream: &crate::Stream, a: &crate::DeviceBuffer<u8>, s: &crate::DeviceBuffer<f32>, w: &crate::PreparedWeight, len: usize) -> Result<Vec<T>> {
            let mut c = ctx.alloc::<T>(len)?;
            plan.enqueue(stream, a.view(), s.view(), w, &mut c.view_mut())?;
            ctx.download(stream, c.view())
        }
        let len = s.m * s.n;
        Ok(match s.out_dtype {
            OutDtype::Bf16 => Output::Bf16(run_typed(ctx, &plan, &stream, &a, &a_scales, &weight, len)?),
            OutDtype::F16 => Output::F16(run_typed(ctx, &plan, &stream, &a, &a_scales, &weight, len)?),
            OutDtype::F32 => Output::F32(run_typed(ctx, &plan, &stream, &a, &a_scales, &weight, len)?),
        })
    }
}
