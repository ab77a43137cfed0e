//! The argument lists of every kernel the backend launches, in the order of the kernel ABI
//! (hip/README.md; `hip/<op>.hip`). Each struct holds the values of one launch; `args()` borrows
//! them as the parameter array. The tests compare `args().c_types()` with the parameter
//! lists parsed from the `.hip` sources, so an argument out of order fails a test.

use super::runtime::{DevicePtr, LaunchArgs};
use super::vendor_plan::ScaleReduce;

/// `gemm_block_fp8_<tag>_<out>(a, a_scales, b, b_scales, c, M, N, K, as_stride_m, as_stride_kb)`.
pub struct GemmArgs {
    pub a: DevicePtr<u8>,
    pub a_scales: DevicePtr<f32>,
    pub b: DevicePtr<u8>,
    pub b_scales: DevicePtr<f32>,
    pub c: DevicePtr<u8>,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub as_stride_m: i32,
    pub as_stride_kb: i32,
}

impl GemmArgs {
    pub fn args(&self) -> LaunchArgs<'_> {
        let mut a = LaunchArgs::new();
        a.arg(&self.a).arg(&self.a_scales).arg(&self.b).arg(&self.b_scales).arg(&self.c);
        a.arg(&self.m).arg(&self.n).arg(&self.k).arg(&self.as_stride_m).arg(&self.as_stride_kb);
        a
    }
}

/// `scale_reduce_<out>(partial, batch_stride, a_scales, b_scales, c, m0, rows, N, KB,
/// as_stride_m, as_stride_kb)`.
pub struct ScaleReduceArgs {
    pub partial: DevicePtr<f32>,
    pub a_scales: DevicePtr<f32>,
    pub b_scales: DevicePtr<f32>,
    pub c: DevicePtr<u8>,
    pub plan: ScaleReduce,
}

impl ScaleReduceArgs {
    pub fn args(&self) -> LaunchArgs<'_> {
        let r = &self.plan;
        let mut a = LaunchArgs::new();
        a.arg(&self.partial).arg(&r.batch_stride).arg(&self.a_scales).arg(&self.b_scales).arg(&self.c);
        a.arg(&r.m0).arg(&r.rows).arg(&r.n).arg(&r.kb).arg(&r.as_stride_m).arg(&r.as_stride_kb);
        a
    }
}

/// `quant_per_token_group(x, q, s, M, K, fp8_max, s_stride_m, s_stride_g, ue8m0)`.
pub struct QuantTokensArgs {
    pub x: DevicePtr<f32>,
    pub q: DevicePtr<u8>,
    pub s: DevicePtr<f32>,
    pub m: i32,
    pub k: i32,
    pub fp8_max: f32,
    pub s_stride_m: i32,
    pub s_stride_g: i32,
    pub ue8m0: i32,
}

impl QuantTokensArgs {
    pub fn args(&self) -> LaunchArgs<'_> {
        let mut a = LaunchArgs::new();
        a.arg(&self.x).arg(&self.q).arg(&self.s).arg(&self.m).arg(&self.k);
        a.arg(&self.fp8_max).arg(&self.s_stride_m).arg(&self.s_stride_g).arg(&self.ue8m0);
        a
    }
}

/// `quant_weight_blocks(w, q, s, N, K)`.
pub struct QuantWeightArgs {
    pub w: DevicePtr<f32>,
    pub q: DevicePtr<u8>,
    pub s: DevicePtr<f32>,
    pub n: i32,
    pub k: i32,
}

impl QuantWeightArgs {
    pub fn args(&self) -> LaunchArgs<'_> {
        let mut a = LaunchArgs::new();
        a.arg(&self.w).arg(&self.q).arg(&self.s).arg(&self.n).arg(&self.k);
        a
    }
}

/// `convert_e4m3fn_to_fnuz(w, n_bytes, s, n_scales)`.
pub struct ConvertFnuzArgs {
    pub w: DevicePtr<u8>,
    pub n_bytes: i64,
    pub s: DevicePtr<f32>,
    pub n_scales: i64,
}

impl ConvertFnuzArgs {
    pub fn args(&self) -> LaunchArgs<'_> {
        let mut a = LaunchArgs::new();
        a.arg(&self.w).arg(&self.n_bytes).arg(&self.s).arg(&self.n_scales);
        a
    }
}
