//! Launch sequences of the HIP backend on raw device addresses and the caller's stream, the
//! same for the real device and the emulated one (they differ only in their [`HipLauncher`]):
//! the GEMM kernel, the rocBLAS block-scaled path (one FP8 GEMM per 128-wide K block, reduced
//! with the scales by a HIP kernel, M chunked to bound the workspace), the quantization kernels.
//! Every launch packs the argument list of its kernel in `hip/<op>.hip` (see `abi`).

use std::sync::Arc;

use super::abi;
use super::kernels;
use super::launcher::HipLauncher;
use super::runtime::{DevicePtr, LaunchConfig};
use super::vendor_plan::{self, act_scale_strides, VendorPlan};
use crate::backend::{GemmLaunch, GemmLaunchArgs, QuantTokensArgs, QuantWeightArgs};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::types::{GemmPath, GemmShape, ScaleLayout};

/// The crate's GEMM kernel for one (N, K, output).
pub(super) struct KernelLaunch {
    pub kernel: kernels::GemmKernel,
    pub shape: GemmShape,
    pub launcher: Arc<dyn HipLauncher>,
}

impl GemmLaunch for KernelLaunch {
    fn describe(&self) -> String {
        format!("hip kernel {}", self.kernel.symbol)
    }
    /// The split-K partials and tile counters (none without a split).
    fn workspace_bytes(&self, m: usize) -> usize {
        let s = &self.shape;
        self.kernel.launch(m, s.n, s.k, self.launcher.compute_units()).workspace_bytes
    }
    unsafe fn enqueue(&self, stream: &Stream, d: &GemmLaunchArgs) -> Result<()> {
        // M*N < 2^31 (checked by the plan), so the tile count fits u32.
        let l = self.kernel.launch(d.m, d.n, d.k, self.launcher.compute_units());
        if l.workspace_bytes > d.workspace_bytes {
            return Err(Error::Unsupported { path: self.describe(), reason: format!("split-K workspace of {} bytes, {} needed", d.workspace_bytes, l.workspace_bytes) });
        }
        let workspace = if l.k_splits > 1 { DevicePtr::from_addr(d.workspace) } else { DevicePtr::null() };
        if l.k_splits > 1 {
            // The kernel leaves its tile counters zero, but they sit after the partials, whose
            // size depends on M: a plan's workspace serves every M, so clear them first.
            let counters = l.k_splits as usize * d.m * d.n * 4;
            self.launcher.zero(stream, DevicePtr::from_addr(d.workspace + counters as u64), l.workspace_bytes - counters)?;
        }
        let cfg = LaunchConfig { grid: l.grid, block: (l.block, 1, 1), shared_bytes: 0 };
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
            group_m: self.kernel.group_m_arg(),
            k_splits: l.k_splits as i32,
            workspace,
        };
        // SAFETY: the GEMM ABI in order; the plan checked every buffer against the shape and
        // the workspace holds the split's partials and counters.
        self.launcher.gemm(stream, &self.kernel, cfg, &values)
    }
}

/// rocBLAS per K block, then the scale reduction, for one (N, K, output, activation layout).
pub(super) struct VendorLaunch {
    pub launcher: Arc<dyn HipLauncher>,
    pub shape: GemmShape,
    pub layout: ScaleLayout,
    /// Bound on the fp32 partial-product workspace (M is chunked to stay inside it).
    pub workspace_bound: usize,
}

impl VendorLaunch {
    /// The chunk plan for `m` rows: host arithmetic only, so it is made per enqueue.
    fn plan(&self, m: usize) -> Result<VendorPlan> {
        let s = &self.shape;
        let plan = VendorPlan::new(m, s.n, s.k, self.layout, self.workspace_bound)?;
        plan.check_bounds().map_err(|reason| Error::Unsupported { path: "rocm vendor".into(), reason })?;
        Ok(plan)
    }
}

impl GemmLaunch for VendorLaunch {
    fn describe(&self) -> String {
        format!("{} per K block + scale_reduce", self.launcher.vendor_name())
    }
    fn workspace_bytes(&self, m: usize) -> usize {
        self.plan(m).map_or(0, |p| 4 * p.workspace_elems)
    }

    /// The chunked partials grow with M up to the bound.
    fn workspace_bound(&self, max_m: usize) -> usize {
        self.workspace_bytes(max_m)
    }
    unsafe fn enqueue(&self, stream: &Stream, d: &GemmLaunchArgs) -> Result<()> {
        let plan = self.plan(d.m)?;
        if plan.chunk_count() > 1 {
            log::debug!("rocm vendor path: M={} in {} chunks of {} rows ({} MiB workspace)", d.m, plan.chunk_count(), plan.chunk_rows, (plan.workspace_elems * 4) >> 20);
        }
        if d.workspace_bytes < 4 * plan.workspace_elems {
            return Err(Error::Unsupported { path: "rocm vendor".into(), reason: format!("workspace of {} bytes, {} needed", d.workspace_bytes, 4 * plan.workspace_elems) });
        }
        let work = DevicePtr::<f32>::from_addr(d.workspace);
        for chunk in plan.chunks() {
            for g in &chunk.gemms {
                // SAFETY: `plan.check_bounds()` proved every call inside the weight, activation
                // and workspace buffers, which outlive the stream work.
                self.launcher.vendor_gemm(stream, g, DevicePtr::from_addr(d.b), DevicePtr::from_addr(d.a), work)?;
            }
            let values = abi::ScaleReduceArgs { partial: work, a_scales: DevicePtr::from_addr(d.a_scales), b_scales: DevicePtr::from_addr(d.b_scales), c: DevicePtr::from_addr(d.c), plan: chunk.reduce };
            // SAFETY: the scale_reduce ABI in order; it reads kb * batch_stride workspace
            // floats (checked by check_bounds) and writes rows m0..m0+rows of C.
            self.launcher.scale_reduce(stream, self.shape.out_dtype, LaunchConfig::linear(chunk.reduce.grid_x, vendor_plan::REDUCE_THREADS), &values)?;
        }
        Ok(())
    }
}

/// The GEMM instantiation `path` names, or why there is none. `emulated_only` restricts it to
/// the kernels the emulation library carries.
pub fn kernel_for(shape: &GemmShape, path: &GemmPath, emulated_only: bool) -> std::result::Result<kernels::GemmKernel, String> {
    let cfg = match path {
        GemmPath::Tuned(cfg) => cfg.clone(),
        GemmPath::KernelDefault => kernels::default_gemm_config(),
        GemmPath::Vendor => return Err("the vendor path runs no GEMM kernel".into()),
    };
    if cfg.cluster() != 1 {
        return Err(format!("config {}: thread-block clusters exist only on the CUDA (Hopper) kernel", cfg.short()));
    }
    let k = kernels::resolve_gemm(&cfg, shape.out_dtype)?;
    if emulated_only && !k.emulated {
        return Err(format!("config {} is compiled for the GPU but not into the emulation library", cfg.short()));
    }
    Ok(k)
}

/// `Backend::resolve_gemm` of both HIP devices (after their `supports`).
pub(super) fn resolve(launcher: &Arc<dyn HipLauncher>, shape: &GemmShape, path: &GemmPath, layout: ScaleLayout, workspace_bound: usize, emulated_only: bool) -> Result<Box<dyn GemmLaunch>> {
    Ok(match path {
        GemmPath::Vendor => Box::new(VendorLaunch { launcher: Arc::clone(launcher), shape: *shape, layout, workspace_bound }),
        other => {
            let kernel = kernel_for(shape, other, emulated_only).map_err(|reason| Error::Unsupported { path: format!("rocm {}", other.label()), reason })?;
            Box::new(KernelLaunch { kernel, shape: *shape, launcher: Arc::clone(launcher) })
        }
    })
}

/// Token quantization (f32, bf16 or f16 input: one kernel each).
///
/// # Safety
/// As `Backend::enqueue_quantize_tokens`.
pub(super) unsafe fn quantize_tokens(launcher: &dyn HipLauncher, device: &Device, stream: &Stream, a: &QuantTokensArgs) -> Result<()> {
    if a.format != device.fp8 {
        return Err(Error::invalid("quantize_tokens", format!("{:?} requested but the device's kernels write {:?}", a.format, device.fp8)));
    }
    if a.group != kernels::SCALE_BLOCK {
        return Err(Error::Unsupported { path: "rocm quant_per_token_group".into(), reason: format!("group {} (the HIP kernel quantizes groups of 128)", a.group) });
    }
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
    launcher.quant_tokens(stream, a.input, LaunchConfig::linear(grid, kernels::AUX_THREADS), &values)
}

/// 128x128 block weight quantization (f32, bf16 or f16 input).
///
/// # Safety
/// As `Backend::enqueue_quantize_weight`.
pub(super) unsafe fn quantize_weight(launcher: &dyn HipLauncher, device: &Device, stream: &Stream, a: &QuantWeightArgs) -> Result<()> {
    if a.format != device.fp8 {
        return Err(Error::invalid("quantize_weight", format!("{:?} requested but the device's kernels write {:?}", a.format, device.fp8)));
    }
    let (nb, kb) = (a.n.div_ceil(128), a.k.div_ceil(128));
    let values = abi::QuantWeightArgs { w: DevicePtr::from_addr(a.w), q: DevicePtr::from_addr(a.q), s: DevicePtr::from_addr(a.s), n: a.n as i32, k: a.k as i32 };
    let cfg = LaunchConfig { grid: (kb as u32, nb as u32, 1), block: (kernels::AUX_THREADS, 1, 1), shared_bytes: 0 };
    // SAFETY: quant_weight_blocks ABI; w n*k floats, q n*k bytes, s nb*kb floats.
    launcher.quant_weight(stream, a.input, cfg, &values)
}

/// The in-place e4m3fn -> e4m3fnuz conversion.
///
/// # Safety
/// As `Backend::enqueue_convert_to_fnuz`.
pub(super) unsafe fn convert_to_fnuz(launcher: &dyn HipLauncher, stream: &Stream, q: u64, bytes: usize, s: u64, scales: usize) -> Result<()> {
    let values = abi::ConvertFnuzArgs { w: DevicePtr::from_addr(q), n_bytes: bytes as i64, s: DevicePtr::from_addr(s), n_scales: scales as i64 };
    // Grid-stride loops: any grid covers the data; cap it for huge weights.
    let grid = bytes.max(scales).div_ceil(kernels::AUX_THREADS as usize).clamp(1, 1 << 16) as u32;
    // SAFETY: convert ABI; q holds `bytes` bytes and s `scales` floats.
    launcher.convert_to_fnuz(stream, LaunchConfig::linear(grid, kernels::AUX_THREADS), &values)
}

/// The distinct configs of `kernels` (the tuner's candidates).
pub(super) fn distinct_configs(kernels: impl IntoIterator<Item = kernels::GemmKernel>) -> Vec<crate::config::KernelConfig> {
    let mut out: Vec<crate::config::KernelConfig> = Vec::new();
    for k in kernels {
        let cfg = k.config();
        if !out.contains(&cfg) {
            out.push(cfg);
        }
    }
    out
}
