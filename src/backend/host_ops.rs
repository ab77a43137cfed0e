//! Host-slice conveniences on every backend, built on the device primitives: upload, the same
//! launch a [`GemmPlan`](crate::GemmPlan) enqueues, download. Benchmarks and the tuner time
//! products through [`HostOps::time_gemm`], which replays exactly that launch.

use crate::backend::{Backend, GemmLaunch, GemmLaunchArgs, QuantTokensArgs, QuantWeightArgs, TimingOptions};
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::memory::{as_bytes, DeviceBuffer, DeviceElem};
use crate::problem::{GemmProblem, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, TokenQuantOptions};
use crate::stream::Stream;
use crate::types::{BackendKind, GemmPath, InputDtype, OutDtype};

/// Host-slice operations of a backend (import this trait to call them).
pub trait HostOps {
    /// Token quantization of host `x` [M, K] (f32).
    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens>;
    /// Block quantization of host `w` [N, K] (f32).
    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight>;
    /// Runs a validated problem along `path` (C poisoned with 0xFF bytes first, so an element
    /// a kernel forgets to write shows as NaN).
    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output>;
    /// Runs the problem `launches` times on one set of device buffers (C poisoned before each)
    /// and returns each output: what a caller that keeps its buffers, or a replayed graph, gets.
    fn gemm_relaunched(&self, p: &GemmProblem, path: &GemmPath, launches: usize) -> Result<Vec<Output>>;
    /// Per-repeat seconds per product of `path` on `p`, over input copies rotated past the
    /// last-level cache, through the backend's timer.
    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>>;
}

impl<B: Backend> HostOps for B {
    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        (self as &dyn Backend).quantize_tokens(x, m, k, opts)
    }
    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        (self as &dyn Backend).quantize_weight(w, n, k, block, format)
    }
    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output> {
        (self as &dyn Backend).gemm(p, path)
    }
    fn gemm_relaunched(&self, p: &GemmProblem, path: &GemmPath, launches: usize) -> Result<Vec<Output>> {
        (self as &dyn Backend).gemm_relaunched(p, path, launches)
    }
    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        (self as &dyn Backend).time_gemm(p, path, opts)
    }
}

fn upload<T: DeviceElem>(be: &dyn Backend, stream: &Stream, host: &[T]) -> Result<DeviceBuffer<T>> {
    let buf = DeviceBuffer::from_raw(be.alloc(std::mem::size_of_val(host))?, host.len())?;
    // SAFETY: a fresh buffer of exactly these bytes.
    unsafe { be.copy_to_device(stream, buf.addr(), as_bytes(host))? };
    Ok(buf)
}

fn download(be: &dyn Backend, stream: &Stream, addr: u64, bytes: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; bytes];
    // SAFETY: callers pass a buffer of at least `bytes` bytes.
    unsafe { be.copy_to_host(stream, addr, &mut out)? };
    Ok(out)
}

/// Little-endian device bytes to a typed output.
pub fn output_from_bytes(dtype: OutDtype, bytes: &[u8]) -> Output {
    use half::{bf16, f16};
    match dtype {
        OutDtype::F32 => Output::F32(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()),
        OutDtype::Bf16 => Output::Bf16(bytes.chunks_exact(2).map(|b| bf16::from_bits(u16::from_le_bytes([b[0], b[1]]))).collect()),
        OutDtype::F16 => Output::F16(bytes.chunks_exact(2).map(|b| f16::from_bits(u16::from_le_bytes([b[0], b[1]]))).collect()),
    }
}

/// One problem's device buffers, laid out as a prepared weight and a plan's workspace would be.
struct DeviceProblem {
    a: DeviceBuffer<u8>,
    a_scales: DeviceBuffer<f32>,
    b: DeviceBuffer<u8>,
    b_scales: DeviceBuffer<f32>,
    b_scales_vendor: Option<crate::memory::RawBuffer>,
    c: DeviceBuffer<u8>,
    workspace: DeviceBuffer<u8>,
}

impl DeviceProblem {
    fn upload(be: &dyn Backend, stream: &Stream, p: &GemmProblem, launch: &dyn GemmLaunch) -> Result<Self> {
        let s = &p.shape;
        let b_scales = upload(be, stream, p.b_scales)?;
        // SAFETY: b_scales holds n_blocks * k_blocks floats of this device.
        let b_scales_vendor = unsafe { be.vendor_weight_scales(stream, b_scales.addr(), s.n_blocks(), s.k_blocks())? };
        let c_bytes = s.m * s.n * s.out_dtype.bytes();
        let ws = launch.workspace_bytes(s.m);
        Ok(DeviceProblem {
            a: upload(be, stream, p.a)?,
            a_scales: upload(be, stream, p.a_scales.data)?,
            b: upload(be, stream, p.b)?,
            b_scales,
            b_scales_vendor,
            c: DeviceBuffer::from_raw(be.alloc(c_bytes)?, c_bytes)?,
            workspace: DeviceBuffer::from_raw(be.alloc(ws)?, ws)?,
        })
    }

    fn args(&self, p: &GemmProblem) -> GemmLaunchArgs {
        let s = &p.shape;
        GemmLaunchArgs {
            m: s.m,
            n: s.n,
            k: s.k,
            a: self.a.addr(),
            a_scales: self.a_scales.addr(),
            a_scale_strides: p.a_scales.layout.strides(s.m, s.k_blocks()),
            a_layout: p.a_scales.layout,
            b: self.b.addr(),
            b_scales: self.b_scales.addr(),
            b_scales_vendor: self.b_scales_vendor.as_ref().map_or(0, |r| r.addr()),
            c: self.c.addr(),
            workspace: self.workspace.addr(),
            workspace_bytes: self.workspace.len(),
        }
    }

    fn bytes(&self) -> usize {
        self.a.len() + self.b.len() + self.c.len() + 4 * (self.a_scales.len() + self.b_scales.len())
    }

    fn poison(&self, be: &dyn Backend, stream: &Stream) -> Result<()> {
        // SAFETY: C is this problem's own buffer of c.len() bytes.
        unsafe { be.copy_to_device(stream, self.c.addr(), &vec![0xFFu8; self.c.len()]) }
    }
}

impl dyn Backend + '_ {
    fn checked_launch(&self, p: &GemmProblem, path: &GemmPath) -> Result<Box<dyn GemmLaunch>> {
        p.validate()?;
        self.supports(&p.shape, path).map_err(|reason| Error::Unsupported { path: format!("{} {}", self.kind().name(), path.label()), reason })?;
        if self.kind() != BackendKind::Cpu && p.shape.format != self.device().fp8 {
            return Err(Error::invalid("gemm", format!("inputs are {:?} but device {} computes in {:?}", p.shape.format, self.device().name, self.device().fp8)));
        }
        self.resolve_gemm(&p.shape, path, p.a_scales.layout)
    }
}

impl HostOps for dyn Backend + '_ {
    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        const OP: &str = "quantize_tokens";
        if self.kind() == BackendKind::Cpu {
            return crate::quant::quantize_per_token_group(x, m, k, opts);
        }
        check_host_input(OP, x, m, k)?;
        let fp8_max = check_quant_options(self, OP, opts)?;
        let groups = k.div_ceil(128);
        let s_len = opts.layout.scale_count(m, groups);
        let stream = self.new_stream()?;
        let xd = upload(self, &stream, x)?;
        let q = DeviceBuffer::<u8>::from_raw(self.alloc(m * k)?, m * k)?;
        let s = DeviceBuffer::<f32>::from_raw(self.alloc(4 * s_len)?, s_len)?;
        let args = QuantTokensArgs { x: xd.addr(), input: InputDtype::F32, m, k, group: 128, q: q.addr(), s: s.addr(), layout: opts.layout, format: opts.format, fp8_max, ue8m0: opts.ue8m0 };
        // SAFETY: buffers of exactly the sizes the arguments describe.
        unsafe { self.enqueue_quantize_tokens(&stream, &args)? };
        let qh = download(self, &stream, q.addr(), m * k)?;
        let sh = download(self, &stream, s.addr(), 4 * s_len)?;
        let scales = sh.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok(QuantizedTokens { m, k, group: 128, format: opts.format, layout: opts.layout, q: qh, scales })
    }

    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        const OP: &str = "quantize_weight";
        if self.kind() == BackendKind::Cpu {
            return crate::quant::quantize_weight_blocks(w, n, k, block, format);
        }
        check_host_input(OP, w, n, k)?;
        if block != (128, 128) {
            return Err(Error::Unsupported { path: format!("{} weight quantization", self.kind().name()), reason: format!("block {block:?} (the GPU kernels quantize 128x128 blocks)") });
        }
        if format != self.device().fp8 {
            return Err(Error::invalid(OP, format!("{format:?} requested but {} computes in {:?}", self.device().name, self.device().fp8)));
        }
        let (nb, kb) = (n.div_ceil(128), k.div_ceil(128));
        let stream = self.new_stream()?;
        let wd = upload(self, &stream, w)?;
        let q = DeviceBuffer::<u8>::from_raw(self.alloc(n * k)?, n * k)?;
        let s = DeviceBuffer::<f32>::from_raw(self.alloc(4 * nb * kb)?, nb * kb)?;
        let args = QuantWeightArgs { w: wd.addr(), input: InputDtype::F32, n, k, q: q.addr(), s: s.addr(), format };
        // SAFETY: buffers of exactly the sizes the arguments describe.
        unsafe { self.enqueue_quantize_weight(&stream, &args)? };
        let qh = download(self, &stream, q.addr(), n * k)?;
        let sh = download(self, &stream, s.addr(), 4 * nb * kb)?;
        let scales = sh.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok(QuantizedWeight { n, k, block, format, q: qh, scales })
    }

    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output> {
        Ok(self.gemm_relaunched(p, path, 1)?.remove(0))
    }

    fn gemm_relaunched(&self, p: &GemmProblem, path: &GemmPath, launches: usize) -> Result<Vec<Output>> {
        let launch = self.checked_launch(p, path)?;
        let stream = self.new_stream()?;
        let d = DeviceProblem::upload(self, &stream, p, &*launch)?;
        let args = d.args(p);
        (0..launches.max(1))
            .map(|_| {
                d.poison(self, &stream)?;
                // SAFETY: buffers uploaded for exactly this problem, workspace sized by the launch.
                unsafe { launch.enqueue(&stream, &args)? };
                let bytes = download(self, &stream, d.c.addr(), d.c.len())?;
                Ok(output_from_bytes(p.shape.out_dtype, &bytes))
            })
            .collect()
    }

    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        let launch = self.checked_launch(p, path)?;
        let stream = self.new_stream()?;
        let first = DeviceProblem::upload(self, &stream, p, &*launch)?;
        let copies = if self.kind() == BackendKind::Cpu { 1 } else { opts.copies(first.bytes(), 32) };
        let mut sets = vec![first];
        for _ in 1..copies {
            sets.push(DeviceProblem::upload(self, &stream, p, &*launch)?);
        }
        let args: Vec<GemmLaunchArgs> = sets.iter().map(|d| d.args(p)).collect();
        self.synchronize(&stream)?;
        // SAFETY: each set was uploaded for this problem with the launch's workspace.
        self.time_passes(&stream, copies, opts, &|i| unsafe { launch.enqueue(&stream, &args[i]) })
    }
}

/// The token-quantization options a backend can run, checked before any work: group 128 and
/// the device's own flavour on GPUs (the CPU takes any group and either flavour), fp8_max in
/// (0, the flavour's max]. Returns the fp8_max to use.
pub(crate) fn check_quant_options(be: &dyn Backend, op: &'static str, opts: &TokenQuantOptions) -> Result<f32> {
    if opts.group == 0 {
        return Err(Error::invalid(op, "group size 0"));
    }
    if be.kind() != BackendKind::Cpu {
        if opts.group != 128 {
            return Err(Error::Unsupported { path: format!("{} quantization", be.kind().name()), reason: format!("group {} (the GPU kernels quantize groups of 128)", opts.group) });
        }
        if opts.format != be.device().fp8 {
            return Err(Error::invalid(op, format!("{:?} requested but {} computes in {:?}", opts.format, be.device().name, be.device().fp8)));
        }
    }
    let fp8_max = opts.effective_fp8_max();
    if !(fp8_max.is_finite() && fp8_max > 0.0 && fp8_max <= opts.format.max_finite()) {
        return Err(Error::invalid(op, format!("fp8_max {fp8_max} outside (0, {}]", opts.format.max_finite())));
    }
    Ok(fp8_max)
}

/// Host input checks shared by both quantizers.
fn check_host_input(op: &'static str, x: &[f32], rows: usize, cols: usize) -> Result<()> {
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
    Ok(())
}
