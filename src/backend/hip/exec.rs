//! Launch sequences of the HIP backend on raw device addresses and the caller's stream: the
//! GEMM kernel, the rocBLAS block-scaled path (one FP8 GEMM per 128-wide K block, reduced with
//! the scales by a HIP kernel, M chunked to bound the workspace), the quantization kernels.
//! Every launch passes the argument list of its kernel in `hip/<op>.hip` (see `abi`).

use std::sync::{Arc, Mutex};

use super::abi;
use super::kernels;
use super::rocblas::{self, RocBlas};
use super::runtime::{result, DeviceBuffer, DevicePtr, Function, LaunchConfig};
use super::sys;
use super::vendor_plan::{self, act_scale_strides, VendorPlan};
use crate::backend::{GemmLaunch, GemmLaunchArgs};
use crate::error::{Error, Result};
use crate::memory::Allocation;
use crate::stream::Stream;
use crate::types::{GemmShape, ScaleLayout};

/// HIP device memory owned by a crate buffer.
pub(super) struct HipAllocation {
    pub(super) _buffer: DeviceBuffer<u8>,
}
impl Allocation for HipAllocation {}

/// A caller's or the crate's stream as the runtime takes it.
pub(super) fn raw_stream(stream: &Stream) -> sys::hipStream_t {
    stream.raw() as sys::hipStream_t
}

/// The crate's GEMM kernel for one (N, K, output).
pub(super) struct KernelLaunch {
    pub kernel: kernels::GemmKernel,
    pub function: Arc<Function>,
    pub ordinal: usize,
}

impl GemmLaunch for KernelLaunch {
    fn describe(&self) -> String {
        format!("hip kernel {}", self.kernel.symbol)
    }
    fn workspace_bytes(&self, _m: usize) -> usize {
        0
    }
    unsafe fn enqueue(&self, stream: &Stream, d: &GemmLaunchArgs) -> Result<()> {
        // M*N < 2^31 (checked by the plan), so the tile count fits u32.
        let cfg = LaunchConfig::linear(self.kernel.grid_x(d.m, d.n), self.kernel.threads);
        let values = abi::GemmArgs {
            a: DevicePtr::from_addr(d.a),
            a_scales: DevicePtr::from_addr(d.a_scales),
            b: DevicePtr::from_addr(d.b),
            b_scales: DevicePtr::from_addr(d.b_scales),
            c: DevicePtr::from_addr(d.c),
            m: d.m as i32,
            n: d.n as i32,
            k: d.k as i32,
            as_stride_m: d.a_scale_strides.0 as i32,
            as_stride_kb: d.a_scale_strides.1 as i32,
        };
        // SAFETY: the GEMM ABI in order; the plan checked every buffer against the shape.
        self.function.launch_raw(raw_stream(stream), self.ordinal, cfg, &mut values.args())
    }
}

/// rocBLAS per K block, then the scale reduction, for one (N, K, output, activation layout).
pub(super) struct VendorLaunch {
    pub lib: Arc<RocBlas>,
    /// Created at resolve time; its stream is set to the caller's on every enqueue.
    pub handle: Mutex<rocblas::Handle>,
    pub reduce: Arc<Function>,
    pub shape: GemmShape,
    pub layout: ScaleLayout,
    /// Bound on the fp32 partial-product workspace (M is chunked to stay inside it).
    pub workspace_bound: usize,
    pub ordinal: usize,
}

impl VendorLaunch {
    fn plan(&self, m: usize) -> Result<VendorPlan> {
        let s = &self.shape;
        let plan = VendorPlan::new(m, s.n, s.k, self.layout, self.workspace_bound)?;
        plan.check_bounds().map_err(|reason| Error::Unsupported { path: "rocm vendor".into(), reason })?;
        Ok(plan)
    }
}

impl GemmLaunch for VendorLaunch {
    fn describe(&self) -> String {
        format!("rocBLAS {} per K block + scale_reduce", self.lib.version())
    }
    fn workspace_bytes(&self, m: usize) -> usize {
        self.plan(m).map_or(0, |p| 4 * p.workspace_elems)
    }
    unsafe fn enqueue(&self, stream: &Stream, d: &GemmLaunchArgs) -> Result<()> {
        let plan = self.plan(d.m)?;
        if d.workspace_bytes < 4 * plan.workspace_elems {
            return Err(Error::Unsupported { path: "rocm vendor".into(), reason: format!("workspace of {} bytes, {} needed", d.workspace_bytes, 4 * plan.workspace_elems) });
        }
        let st = raw_stream(stream);
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner());
        handle.set_stream(st)?;
        let work = DevicePtr::<f32>::from_addr(d.workspace);
        for chunk in plan.chunks() {
            for g in &chunk.gemms {
                // SAFETY: `plan.check_bounds()` proved every call inside the weight, activation
                // and workspace buffers, which outlive the stream work.
                handle.gemm_f8_f32(g, DevicePtr::from_addr(d.b), DevicePtr::from_addr(d.a), work)?;
            }
            let values = abi::ScaleReduceArgs { partial: work, a_scales: DevicePtr::from_addr(d.a_scales), b_scales: DevicePtr::from_addr(d.b_scales), c: DevicePtr::from_addr(d.c), plan: chunk.reduce };
            // SAFETY: the scale_reduce ABI in order; it reads kb * batch_stride workspace
            // floats (checked by check_bounds) and writes rows m0..m0+rows of C.
            self.reduce.launch_raw(st, self.ordinal, LaunchConfig::linear(chunk.reduce.grid_x, vendor_plan::REDUCE_THREADS), &mut values.args())?;
        }
        Ok(())
    }
}

/// Launches token quantization (f32 input: the HIP kernel's only input type).
///
/// # Safety
/// As `Backend::enqueue_quantize_tokens`.
pub(super) unsafe fn quantize_tokens(f: &Function, stream: &Stream, ordinal: usize, a: &crate::backend::QuantTokensArgs) -> Result<()> {
    let groups = a.k.div_ceil(128);
    let (s_stride_m, s_stride_g) = act_scale_strides(a.m, groups, a.layout);
    let values = abi::QuantTokensArgs {
        x: DevicePtr::from_addr(a.x),
        q: DevicePtr::from_addr(a.q),
        s: DevicePtr::from_addr(a.s),
        m: a.m as i32,
        k: a.k as i32,
        fp8_max: a.fp8_max,
        s_stride_m,
        s_stride_g,
        ue8m0: a.ue8m0 as i32,
    };
    let grid = (a.m * groups).div_ceil(kernels::QUANT_GROUPS_PER_BLOCK as usize) as u32;
    // SAFETY: quant_per_token_group ABI; sizes checked by the caller.
    f.launch_raw(raw_stream(stream), ordinal, LaunchConfig::linear(grid, kernels::AUX_THREADS), &mut values.args())
}

/// Launches 128x128 block weight quantization (f32 input).
///
/// # Safety
/// As `Backend::enqueue_quantize_weight`.
pub(super) unsafe fn quantize_weight(f: &Function, stream: &Stream, ordinal: usize, a: &crate::backend::QuantWeightArgs) -> Result<()> {
    let (nb, kb) = (a.n.div_ceil(128), a.k.div_ceil(128));
    let values = abi::QuantWeightArgs { w: DevicePtr::from_addr(a.w), q: DevicePtr::from_addr(a.q), s: DevicePtr::from_addr(a.s), n: a.n as i32, k: a.k as i32 };
    let cfg = LaunchConfig { grid: (kb as u32, nb as u32, 1), block: (kernels::AUX_THREADS, 1, 1), shared_bytes: 0 };
    // SAFETY: quant_weight_blocks ABI; w n*k floats, q n*k bytes, s nb*kb floats.
    f.launch_raw(raw_stream(stream), ordinal, cfg, &mut values.args())
}

/// Launches the in-place e4m3fn -> e4m3fnuz conversion.
///
/// # Safety
/// As `Backend::enqueue_convert_to_fnuz`.
pub(super) unsafe fn convert_to_fnuz(f: &Function, stream: &Stream, ordinal: usize, q: u64, bytes: usize, s: u64, scales: usize) -> Result<()> {
    let values = abi::ConvertFnuzArgs { w: DevicePtr::from_addr(q), n_bytes: bytes as i64, s: DevicePtr::from_addr(s), n_scales: scales as i64 };
    // Grid-stride loops: any grid covers the data; cap it for huge weights.
    let grid = bytes.max(scales).div_ceil(kernels::AUX_THREADS as usize).clamp(1, 1 << 16) as u32;
    // SAFETY: convert ABI; q holds `bytes` bytes and s `scales` floats.
    f.launch_raw(raw_stream(stream), ordinal, LaunchConfig::linear(grid, kernels::AUX_THREADS), &mut values.args())
}

/// Enqueues a copy of `bytes` bytes of `kind` on `stream`.
///
/// # Safety
/// Both addresses must be valid for `bytes` bytes in the spaces `kind` names.
pub(super) unsafe fn copy(ordinal: usize, stream: &Stream, dst: *mut std::ffi::c_void, src: *const std::ffi::c_void, bytes: usize, kind: std::os::raw::c_int) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    super::runtime::bind(ordinal)?;
    result::check("hipMemcpyAsync", sys::hipMemcpyAsync(dst, src, bytes, kind, raw_stream(stream)))
}

/// Waits for `stream`.
pub(super) fn synchronize(ordinal: usize, stream: &Stream) -> Result<()> {
    super::runtime::bind(ordinal)?;
    // SAFETY: a stream of this device (checked where it was made or wrapped).
    result::check("hipStreamSynchronize", unsafe { sys::hipStreamSynchronize(raw_stream(stream)) })
}
