//! Launch sequences of the HIP backend: uploading a problem, the GEMM kernel, the rocBLAS
//! block-scaled path, the quantization kernels. Every launch states the ABI of TEAM.md.

use std::sync::Arc;

use half::{bf16, f16};

use super::kernels;
use super::rocblas;
use super::abi;
use super::runtime::{DeviceBuffer, DevicePtr, Function, LaunchConfig, Stream};
use super::vendor_plan::{self, act_scale_strides, VendorPlan};
use super::HipBackend;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::gemm::{GemmPath, GemmProblem, GemmShape, OutDtype, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, ScaleLayout, TokenQuantOptions};

/// State used only while the stream is locked.
#[derive(Default)]
pub(super) struct ExecState {
    rocblas: Option<rocblas::Handle>,
}

/// A problem resident on the device, with its output buffer.
pub(super) struct DeviceProblem {
    shape: GemmShape,
    layout: ScaleLayout,
    a: DeviceBuffer<u8>,
    a_scales: DeviceBuffer<f32>,
    b: DeviceBuffer<u8>,
    b_scales: DeviceBuffer<f32>,
    c: DeviceBuffer<u8>,
}

impl DeviceProblem {
    pub(super) fn upload(stream: &Stream, p: &GemmProblem) -> Result<Self> {
        let ord = stream.ordinal();
        Ok(DeviceProblem {
            shape: p.shape,
            layout: p.a_scales.layout,
            a: DeviceBuffer::from_host(stream, p.a)?,
            a_scales: DeviceBuffer::from_host(stream, p.a_scales.data)?,
            b: DeviceBuffer::from_host(stream, p.b)?,
            b_scales: DeviceBuffer::from_host(stream, p.b_scales)?,
            c: DeviceBuffer::alloc(ord, p.shape.m * p.shape.n * p.shape.out_dtype.bytes())?,
        })
    }

    pub(super) fn download(&self, stream: &Stream) -> Result<Output> {
        let mut bytes = vec![0u8; self.c.len()];
        self.c.copy_to_host(stream, &mut bytes)?;
        Ok(output_from_bytes(self.shape.out_dtype, &bytes))
    }
}

/// Little-endian device bytes to a typed output.
pub fn output_from_bytes(dtype: OutDtype, bytes: &[u8]) -> Output {
    match dtype {
        OutDtype::F32 => Output::F32(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()),
        OutDtype::Bf16 => Output::Bf16(bytes.chunks_exact(2).map(|b| bf16::from_bits(u16::from_le_bytes([b[0], b[1]]))).collect()),
        OutDtype::F16 => Output::F16(bytes.chunks_exact(2).map(|b| f16::from_bits(u16::from_le_bytes([b[0], b[1]]))).collect()),
    }
}

/// A path resolved to what it launches.
pub(super) enum Resolved {
    Kernel { kernel: kernels::GemmKernel, function: Arc<Function> },
    Vendor { plan: VendorPlan, reduce: Arc<Function> },
}

impl Resolved {
    /// The fp32 workspace the vendor path needs (none for the kernel).
    pub(super) fn workspace(&self, ordinal: usize) -> Result<Option<DeviceBuffer<f32>>> {
        match self {
            Resolved::Kernel { .. } => Ok(None),
            Resolved::Vendor { plan, .. } => Ok(Some(DeviceBuffer::alloc(ordinal, plan.workspace_elems)?)),
        }
    }
}

impl HipBackend {
    pub(super) fn resolve(&self, shape: &GemmShape, layout: ScaleLayout, path: &GemmPath) -> Result<Resolved> {
        match path {
            GemmPath::Vendor => {
                let plan = VendorPlan::new(shape.m, shape.n, shape.k, layout, self.workspace_bytes)?;
                plan.check_bounds().map_err(|reason| Error::Unsupported { path: "rocm vendor".into(), reason })?;
                if plan.chunk_count() > 1 {
                    log::debug!("rocm vendor path: M={} in {} chunks of {} rows ({} MiB workspace)", shape.m, plan.chunk_count(), plan.chunk_rows, (plan.workspace_elems * 4) >> 20);
                }
                let reduce = self.function(kernels::scale_reduce_symbol(shape.out_dtype))?;
                Ok(Resolved::Vendor { plan, reduce })
            }
            other => {
                let kernel = super::kernel_for(shape, other).map_err(|reason| Error::Unsupported { path: format!("rocm {}", other.label()), reason })?;
                let function = self.function(kernel.symbol)?;
                Ok(Resolved::Kernel { kernel, function })
            }
        }
    }

    /// Enqueues one product on the stream (no synchronisation).
    pub(super) fn enqueue(&self, state: &mut ExecState, r: &Resolved, dp: &DeviceProblem, work: Option<&DeviceBuffer<f32>>) -> Result<()> {
        let s = &dp.shape;
        let (as_m, as_kb) = act_scale_strides(s.m, s.k_blocks(), dp.layout);
        match r {
            Resolved::Kernel { kernel, function } => {
                // M*N < 2^31 (validated), so the tile count fits u32.
                let cfg = LaunchConfig::linear(kernel.grid_x(s.m, s.n), kernel.threads);
                let values = abi::GemmArgs {
                    a: dp.a.ptr(),
                    a_scales: dp.a_scales.ptr(),
                    b: dp.b.ptr(),
                    b_scales: dp.b_scales.ptr(),
                    c: dp.c.ptr(),
                    m: s.m as i32,
                    n: s.n as i32,
                    k: s.k as i32,
                    as_stride_m: as_m,
                    as_stride_kb: as_kb,
                    group_m: kernel.group_m_arg(),
                    // Split K needs a zeroed workspace the device plan does not allocate yet.
                    k_splits: 1,
                    workspace: DevicePtr::null(),
                };
                // SAFETY: the GEMM ABI (TEAM.md) in order; buffers sized by DeviceProblem::upload
                // from a validated problem; they live in `dp` until the caller synchronises.
                unsafe { function.launch(&self.stream, cfg, &mut values.args()) }
            }
            Resolved::Vendor { plan, reduce } => {
                let lib = match &self.vendor {
                    Ok(lib) => Arc::clone(lib),
                    Err(why) => return Err(Error::Unsupported { path: "rocm vendor".into(), reason: why.clone() }),
                };
                let work = work.ok_or_else(|| Error::invalid("rocm vendor", "no workspace allocated"))?;
                let handle = match state.rocblas.take() {
                    Some(h) => h,
                    None => rocblas::Handle::new(lib, &self.stream)?,
                };
                let handle = &*state.rocblas.insert(handle);
                for chunk in plan.chunks() {
                    for g in &chunk.gemms {
                        // SAFETY: `plan.check_bounds()` (in resolve) proved every call inside the
                        // weight, activation and workspace buffers, which outlive the stream work.
                        unsafe { handle.gemm_f8_f32(g, dp.b.ptr(), dp.a.ptr(), work.ptr())? };
                    }
                    let values = abi::ScaleReduceArgs { partial: work.ptr(), a_scales: dp.a_scales.ptr(), b_scales: dp.b_scales.ptr(), c: dp.c.ptr(), plan: chunk.reduce };
                    // SAFETY: the scale_reduce ABI in order; it reads kb * batch_stride workspace
                    // floats (checked by check_bounds) and writes rows m0..m0+rows of C.
                    unsafe { reduce.launch(&self.stream, LaunchConfig::linear(chunk.reduce.grid_x, vendor_plan::REDUCE_THREADS), &mut values.args())? };
                }
                Ok(())
            }
        }
    }

    pub(super) fn run_quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        const OP: &str = "quantize_tokens";
        check_quant_input(OP, x, m, k, self.device.fp8, opts.format)?;
        if opts.group != vendor_plan::K_BLOCK {
            return Err(Error::Unsupported { path: "rocm quant_per_token_group".into(), reason: format!("group {} (the HIP kernel quantizes groups of 128)", opts.group) });
        }
        let fp8_max = opts.fp8_max.unwrap_or_else(|| opts.format.default_activation_max());
        if !(fp8_max.is_finite() && fp8_max > 0.0 && fp8_max <= opts.format.max_finite()) {
            return Err(Error::invalid(OP, format!("fp8_max {fp8_max} outside (0, {}]", opts.format.max_finite())));
        }
        let groups = k.div_ceil(opts.group);
        let (s_stride_m, s_stride_g) = act_scale_strides(m, groups, opts.layout);
        let scales_len = opts.layout.scale_count(m, groups);
        let _guard = self.exec.lock().unwrap_or_else(|e| e.into_inner());
        let f = self.function(kernels::QUANT_PER_TOKEN_GROUP)?;
        let xd = DeviceBuffer::from_host(&self.stream, x)?;
        let q = DeviceBuffer::<u8>::alloc(self.device.ordinal, m * k)?;
        let mut s = DeviceBuffer::<f32>::alloc(self.device.ordinal, scales_len)?;
        s.zero(&self.stream)?; // padding rows of column-major scales stay 0
        let values = abi::QuantTokensArgs { x: xd.ptr(), q: q.ptr(), s: s.ptr(), m: m as i32, k: k as i32, fp8_max, s_stride_m, s_stride_g, ue8m0: opts.ue8m0 as i32 };
        let grid = (m * groups).div_ceil(kernels::QUANT_GROUPS_PER_BLOCK as usize) as u32;
        // SAFETY: quant_per_token_group ABI; x has m*k floats, q m*k bytes, s covers every
        // (row, group) at the strides given; all outlive the synchronisation below.
        unsafe { f.launch(&self.stream, LaunchConfig::linear(grid, kernels::AUX_THREADS), &mut values.args())? };
        self.stream.synchronize()?;
        let mut qh = vec![0u8; m * k];
        let mut sh = vec![0f32; scales_len];
        q.copy_to_host(&self.stream, &mut qh)?;
        s.copy_to_host(&self.stream, &mut sh)?;
        Ok(QuantizedTokens { m, k, group: opts.group, format: opts.format, layout: opts.layout, q: qh, scales: sh })
    }

    pub(super) fn run_quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        const OP: &str = "quantize_weight";
        check_quant_input(OP, w, n, k, self.device.fp8, format)?;
        if block != (vendor_plan::N_BLOCK, vendor_plan::K_BLOCK) {
            return Err(Error::Unsupported { path: "rocm quant_weight_blocks".into(), reason: format!("block {block:?} (the HIP kernel quantizes 128x128 blocks)") });
        }
        let (nb, kb) = (n.div_ceil(block.0), k.div_ceil(block.1));
        let _guard = self.exec.lock().unwrap_or_else(|e| e.into_inner());
        let f = self.function(kernels::QUANT_WEIGHT_BLOCKS)?;
        let wd = DeviceBuffer::from_host(&self.stream, w)?;
        let q = DeviceBuffer::<u8>::alloc(self.device.ordinal, n * k)?;
        let s = DeviceBuffer::<f32>::alloc(self.device.ordinal, nb * kb)?;
        let values = abi::QuantWeightArgs { w: wd.ptr(), q: q.ptr(), s: s.ptr(), n: n as i32, k: k as i32 };
        let cfg = LaunchConfig { grid: (kb as u32, nb as u32, 1), block: (kernels::AUX_THREADS, 1, 1), shared_bytes: 0 };
        // SAFETY: quant_weight_blocks ABI; w n*k floats, q n*k bytes, s nb*kb floats.
        unsafe { f.launch(&self.stream, cfg, &mut values.args())? };
        self.stream.synchronize()?;
        let mut qh = vec![0u8; n * k];
        let mut sh = vec![0f32; nb * kb];
        q.copy_to_host(&self.stream, &mut qh)?;
        s.copy_to_host(&self.stream, &mut sh)?;
        Ok(QuantizedWeight { n, k, block, format, q: qh, scales: sh })
    }
}

impl HipBackend {
    /// Converts an OCP e4m3fn weight in place to e4m3fnuz on the GPU (loading OCP
    /// checkpoints on gfx942): byte 0x80 -> 0x00, scales x2, same dequantized values.
    /// Same checks and result as [`QuantizedWeight::convert_to_fnuz`] on the CPU.
    pub fn convert_weight_to_fnuz(&self, w: &mut QuantizedWeight) -> Result<()> {
        const OP: &str = "convert_e4m3fn_to_fnuz";
        if w.format != Fp8Format::E4m3fn {
            return Err(Error::invalid(OP, "the weight is already e4m3fnuz"));
        }
        let want_scales = w.n.div_ceil(w.block.0.max(1)) * w.k.div_ceil(w.block.1.max(1));
        if w.q.len() != w.n * w.k || w.scales.len() != want_scales {
            return Err(Error::shape(OP, format!("{} bytes and {} scales for a {} x {} weight in {:?} blocks", w.q.len(), w.scales.len(), w.n, w.k, w.block)));
        }
        if let Some(i) = w.scales.iter().position(|s| !(s * 2.0).is_finite()) {
            return Err(Error::NonFinite { op: OP, what: format!("scale #{i} ({}) doubled is not finite", w.scales[i]) });
        }
        let _guard = self.exec.lock().unwrap_or_else(|e| e.into_inner());
        let f = self.function(kernels::CONVERT_E4M3FN_TO_FNUZ)?;
        let q = DeviceBuffer::from_host(&self.stream, &w.q)?;
        let s = DeviceBuffer::from_host(&self.stream, &w.scales)?;
        let values = abi::ConvertFnuzArgs { w: q.ptr(), n_bytes: w.q.len() as i64, s: s.ptr(), n_scales: w.scales.len() as i64 };
        // Grid-stride loops: any grid covers the data; cap it for huge weights.
        let grid = w.q.len().max(w.scales.len()).div_ceil(kernels::AUX_THREADS as usize).clamp(1, 1 << 16) as u32;
        // SAFETY: convert ABI; q holds nq bytes and s ns floats, alive until the sync below.
        unsafe { f.launch(&self.stream, LaunchConfig::linear(grid, kernels::AUX_THREADS), &mut values.args())? };
        self.stream.synchronize()?;
        q.copy_to_host(&self.stream, &mut w.q)?;
        s.copy_to_host(&self.stream, &mut w.scales)?;
        w.format = Fp8Format::E4m3fnuz;
        Ok(())
    }
}

/// Shape, finiteness and flavour checks shared by both quantizers (the kernels write the
/// device's own fp8 flavour only).
fn check_quant_input(op: &'static str, x: &[f32], rows: usize, cols: usize, device_fp8: Fp8Format, format: Fp8Format) -> Result<()> {
    if rows == 0 || cols == 0 {
        return Err(Error::shape(op, format!("sizes must be >= 1, got {rows} x {cols}")));
    }
    match rows.checked_mul(cols) {
        Some(e) if e == x.len() && e <= i32::MAX as usize => {}
        _ => return Err(Error::shape(op, format!("input has {} values, expected {rows} x {cols} (at most 2^31-1)", x.len()))),
    }
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite { op, what: format!("input #{i} is {}", x[i]) });
    }
    if format != device_fp8 {
        return Err(Error::invalid(op, format!("{format:?} requested but the device's kernels write {device_fp8:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_bytes_decode_little_endian() {
        let v = [1.5f32, -2.0];
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(output_from_bytes(OutDtype::F32, &bytes), Output::F32(v.to_vec()));
        let h: Vec<u8> = [bf16::from_f32(3.0), bf16::from_f32(-0.5)].iter().flat_map(|x| x.to_bits().to_le_bytes()).collect();
        assert_eq!(output_from_bytes(OutDtype::Bf16, &h).to_f64(), vec![3.0, -0.5]);
        let h: Vec<u8> = [f16::from_f32(0.25)].iter().flat_map(|x| x.to_bits().to_le_bytes()).collect();
        assert_eq!(output_from_bytes(OutDtype::F16, &h).to_f64(), vec![0.25]);
    }

    #[test]
    fn quant_input_checks() {
        let e = check_quant_input("q", &[1.0; 6], 2, 3, Fp8Format::E4m3fnuz, Fp8Format::E4m3fnuz);
        assert!(e.is_ok());
        assert!(matches!(check_quant_input("q", &[1.0; 5], 2, 3, Fp8Format::E4m3fnuz, Fp8Format::E4m3fnuz), Err(Error::Shape { .. })));
        assert!(matches!(check_quant_input("q", &[1.0, f32::NAN], 1, 2, Fp8Format::E4m3fnuz, Fp8Format::E4m3fnuz), Err(Error::NonFinite { .. })));
        assert!(matches!(check_quant_input("q", &[1.0; 2], 1, 2, Fp8Format::E4m3fnuz, Fp8Format::E4m3fn), Err(Error::InvalidArgument { .. })));
        assert!(matches!(check_quant_input("q", &[], 0, 2, Fp8Format::E4m3fnuz, Fp8Format::E4m3fnuz), Err(Error::Shape { .. })));
    }
}
