//! Device-side GEMM problems: upload (kernel or cuBLASLt layout), launch along a path,
//! download, and event timing over rotating input copies (more bytes than L2).

use cudarc::driver::{result, sys, CudaGraph, CudaSlice};
use half::{bf16, f16};

use super::kernels;
use super::runtime::{arg, ptr, DriverResultExt, Gpu};
use super::{cublaslt, CudaBackend};
use crate::backend::{Launches, TimingOptions};
use crate::error::{Error, Result};
use crate::gemm::{GemmPath, GemmProblem, GemmShape, OutDtype, Output};
use crate::quant::ScaleLayout;

/// One problem's device buffers. For the vendor path A has Mp = round_up(M, 4) rows (zero
/// padded), activation scales are M-major with Mp rows, weight scales have round_up(L, 4)
/// columns, and C is [Mp, N].
pub(crate) struct DeviceProblem {
    pub shape: GemmShape,
    pub vendor: bool,
    pub a: CudaSlice<u8>,
    pub a_scales: CudaSlice<f32>,
    pub a_layout: ScaleLayout,
    pub b: CudaSlice<u8>,
    pub b_scales: CudaSlice<f32>,
    pub c: CudaSlice<u8>,
    pub c_rows: usize,
    /// fp32 [M, N] split-K sums (one element when the path does not split K). Zero at
    /// allocation, and every split launch leaves it zero (its conversion kernel clears it).
    pub ws: CudaSlice<f32>,
}

impl DeviceProblem {
    pub fn upload(gpu: &Gpu, p: &GemmProblem, vendor: bool, split_ws: bool) -> Result<Self> {
        let s = p.shape;
        let (kb, mp) = (s.k_blocks(), s.padded_m());
        let (a, a_scales, a_layout, b_scales, c_rows) = if vendor {
            let mut a = p.a.to_vec();
            a.resize(mp * s.k, 0);
            let mut sc = vec![0.0f32; kb * mp];
            for m in 0..s.m {
                for g in 0..kb {
                    sc[g * mp + m] = p.a_scale(m, g);
                }
            }
            let bs = cublaslt::pad_weight_scales(p.b_scales, s.n_blocks(), kb);
            (gpu.upload(&a)?, gpu.upload(&sc)?, ScaleLayout::ColumnMajor, gpu.upload(&bs)?, mp)
        } else {
            (gpu.upload(p.a)?, gpu.upload(p.a_scales.data)?, p.a_scales.layout, gpu.upload(p.b_scales)?, s.m)
        };
        let c = gpu.zeros::<u8>(c_rows * s.n * s.out_dtype.bytes())?;
        let ws = gpu.zeros::<f32>(if split_ws { s.m * s.n } else { 1 })?;
        Ok(DeviceProblem { shape: s, vendor, a, a_scales, a_layout, b: gpu.upload(p.b)?, b_scales, c, c_rows, ws })
    }

    /// A copy of the inputs (for rotation) sharing nothing with `self`.
    fn duplicate(&self, gpu: &Gpu) -> Result<Self> {
        let st = &gpu.stream;
        Ok(DeviceProblem {
            shape: self.shape,
            vendor: self.vendor,
            a: st.clone_dtod(&self.a).dev("cuMemcpyDtoD")?,
            a_scales: st.clone_dtod(&self.a_scales).dev("cuMemcpyDtoD")?,
            a_layout: self.a_layout,
            b: st.clone_dtod(&self.b).dev("cuMemcpyDtoD")?,
            b_scales: st.clone_dtod(&self.b_scales).dev("cuMemcpyDtoD")?,
            c: gpu.zeros::<u8>(self.c.len())?,
            c_rows: self.c_rows,
            ws: gpu.zeros::<f32>(self.ws.len())?,
        })
    }

    fn bytes(&self) -> usize {
        self.a.len() + self.b.len() + self.c.len() + 4 * (self.a_scales.len() + self.b_scales.len() + self.ws.len())
    }
}

/// Poisons C with 0xFF bytes (NaN in f32, bf16 and f16), so an unwritten element shows.
fn poison(gpu: &Gpu, d: &DeviceProblem) -> Result<()> {
    // SAFETY: C is a live allocation of exactly c.len() bytes.
    unsafe { result::memset_d8_async(ptr(&d.c, &gpu.stream), 0xFF, d.c.len(), gpu.stream.cu_stream()) }.dev("cuMemsetD8Async")
}

/// Enqueues one product along `path` (already checked by `supports`).
pub(crate) fn launch(be: &CudaBackend, d: &DeviceProblem, path: &GemmPath) -> Result<()> {
    let st = &be.gpu.stream;
    let s = d.shape;
    let (a, as_, b, bs, c) = (ptr(&d.a, st), ptr(&d.a_scales, st), ptr(&d.b, st), ptr(&d.b_scales, st), ptr(&d.c, st));
    let cfg = match path {
        GemmPath::Vendor => {
            let h = be.lt.as_ref().map_err(|w| Error::Unsupported { path: "cuda vendor".into(), reason: w.clone() })?;
            let plan = cublaslt::LtPlan::new(h, d.c_rows, s.n, s.k, s.out_dtype)?;
            let ws = workspace(be)?;
            // SAFETY: buffers laid out for cuBLASLt by DeviceProblem::upload (vendor = true).
            return unsafe { plan.run(h, b, bs, a, as_, c, ptr(ws, st), st.cu_stream() as _) };
        }
        GemmPath::Tuned(cfg) => cfg.clone(),
        GemmPath::KernelDefault => kernels::heuristic_config(&s, be.device.compute_units),
    };
    let mut inst = kernels::find_gemm(&cfg, s.out_dtype).map_err(|reason| Error::Unsupported { path: format!("cuda kernel {}", cfg.short()), reason })?;
    if inst.body != "mma" && s.k % 16 != 0 {
        // TMA needs a 16-byte row pitch; the mma.sync tile serves this K (same result).
        let fallback = kernels::unaligned_k_config();
        log_unaligned_once(&cfg, &fallback, s.k);
        inst = kernels::find_gemm(&fallback, s.out_dtype).map_err(|reason| Error::Unsupported { path: format!("cuda kernel {}", fallback.short()), reason })?;
    }
    let f = be.function(inst.module, inst.symbol, inst.smem_bytes)?;
    let kb = s.k_blocks();
    let (as_m, as_kb) = match d.a_layout {
        ScaleLayout::RowMajor => (kb as i32, 1i32),
        ScaleLayout::ColumnMajor => (1i32, s.padded_m() as i32),
    };
    let (m, n, k, gm) = (s.m as i32, s.n as i32, s.k as i32, cfg.group_m.max(1) as i32);
    let tiles = kernels::tile_groups(inst.block_m, inst.block_n, 1, &s);
    if tiles > i32::MAX as usize {
        return Err(Error::shape("gemm", format!("{tiles} tiles exceed the grid limit")));
    }
    let splits = kernels::split_k(&cfg, &s, be.device.compute_units);
    if tiles * splits as usize > i32::MAX as usize {
        return Err(Error::shape("gemm", format!("{tiles} tiles x {splits} K splits exceed 32-bit work indexing")));
    }
    if splits > 1 && d.ws.len() < s.m * s.n {
        return Err(Error::Unsupported { path: format!("cuda kernel {}", cfg.short()), reason: "split-K workspace not allocated".into() });
    }
    let ws = ptr(&d.ws, st);
    // The split-K conversion clears the workspace for the next launch (no memset node), so it
    // is loaded before the GEMM: once sums are in the workspace, nothing may stop it running.
    let convert = if splits > 1 { Some(be.function(kernels::SPLITK_MODULE, kernels::splitk_convert_symbol(s.out_dtype), 0)?) } else { None };
    let grid = (tiles as u32, splits, 1);
    if inst.body == "mma" {
        let mut args = [arg(&a), arg(&as_), arg(&b), arg(&bs), arg(&c), arg(&ws), arg(&m), arg(&n), arg(&k), arg(&as_m), arg(&as_kb), arg(&gm)];
        // SAFETY: matches gemm_block_fp8_body's parameters; buffers sized for the shape by upload().
        unsafe { be.gpu.launch(&f, grid, (inst.threads, 1, 1), inst.smem_bytes, &mut args)? };
    } else {
        let tma_a = tensor_map_fp8(a, s.m, s.k, inst.block_m)?;
        // In a cluster each CTA loads its share of the weight tile (and multicasts it).
        let cluster = inst.cluster.max(1);
        let tma_b = tensor_map_fp8(b, s.n, s.k, inst.block_n / cluster)?;
        let split_arg = splits as i32;
        // Persistent: one CTA per resident slot, each looping over tiles x splits; clusters
        // loop over groups of `cluster` vertically adjacent tiles.
        let ctas = if cluster > 1 {
            let groups = kernels::tile_groups(inst.block_m, inst.block_n, cluster, &s) as u64 * splits as u64;
            let resident = be.gpu.max_active_clusters(&f, cluster, inst.threads, inst.smem_bytes)?;
            if resident == 0 {
                return Err(Error::Unsupported { path: format!("cuda kernel {}", cfg.short()), reason: format!("no cluster of {cluster} CTAs fits on this device") });
            }
            (groups.min(resident as u64) * cluster as u64) as u32
        } else {
            let per_sm = be.gpu.blocks_per_sm(&f, inst.threads, inst.smem_bytes)?.max(1);
            let work = tiles as u64 * splits as u64;
            work.min(be.device.compute_units.max(1) as u64 * per_sm as u64) as u32
        };
        let mut args = [arg(&tma_a), arg(&tma_b), arg(&as_), arg(&bs), arg(&c), arg(&ws), arg(&m), arg(&n), arg(&k), arg(&as_m), arg(&as_kb), arg(&gm), arg(&split_arg)];
        // SAFETY: matches the TMA kernel's parameters (two CUtensorMaps by value, then as
        // gemm_block_fp8_body's, then the split count); the maps describe the uploaded A and B.
        unsafe { be.gpu.launch(&f, (ctas, 1, 1), (inst.threads, 1, 1), inst.smem_bytes, &mut args)? };
    }
    if let Some(conv) = convert {
        let count = (s.m * s.n) as i64;
        let blocks = (s.m * s.n).div_ceil(256).min(be.device.compute_units as usize * 16) as u32;
        let mut cargs = [arg(&ws), arg(&c), arg(&count)];
        // SAFETY: matches sm90_splitk_convert_*(float*, OutT*, long long); ws and C hold M*N.
        unsafe { be.gpu.launch(&conv, (blocks, 1, 1), (256, 1, 1), 0, &mut cargs)? };
    }
    Ok(())
}

/// A TMA descriptor for a row-major [rows, k] fp8 matrix at `base`, read in boxes of
/// `box_rows` x 128 bytes with the 128-byte swizzle the wgmma descriptors expect; rows and
/// columns past the end read as zero.
fn tensor_map_fp8(base: u64, rows: usize, k: usize, box_rows: u32) -> Result<sys::CUtensorMap> {
    use sys::{CUtensorMapDataType as D, CUtensorMapFloatOOBfill as F, CUtensorMapInterleave as I, CUtensorMapL2promotion as L, CUtensorMapSwizzle as S};
    let dims = [k as u64, rows as u64];
    let strides = [k as u64];
    let boxes = [128u32, box_rows];
    let elem = [1u32, 1];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: every array has the length the rank (2) requires; `map` is writable and aligned.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            D::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            2,
            base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            I::CU_TENSOR_MAP_INTERLEAVE_NONE,
            S::CU_TENSOR_MAP_SWIZZLE_128B,
            L::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            F::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()
        .dev("cuTensorMapEncodeTiled")?;
        Ok(map.assume_init())
    }
}

fn log_unaligned_once(cfg: &crate::config::KernelConfig, fallback: &crate::config::KernelConfig, k: usize) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| log::info!("cuda: K={k} is not a multiple of 16, which TMA needs: config {} runs as {} (mma.sync)", cfg.short(), fallback.short()));
}

/// Whether `path` splits K on `shape` (and so needs the fp32 workspace).
pub(crate) fn needs_split_ws(be: &CudaBackend, shape: &GemmShape, path: &GemmPath) -> bool {
    let cfg = match path {
        GemmPath::Vendor => return false,
        GemmPath::Tuned(cfg) => cfg.clone(),
        GemmPath::KernelDefault => kernels::heuristic_config(shape, be.device.compute_units),
    };
    kernels::split_k(&cfg, shape, be.device.compute_units) > 1
}

/// The cuBLASLt workspace, allocated once per backend.
fn workspace(be: &CudaBackend) -> Result<&CudaSlice<u8>> {
    if let Some(w) = be.workspace.get() {
        return Ok(w);
    }
    let w = be.gpu.zeros::<u8>(cublaslt::WORKSPACE_BYTES)?;
    let _ = be.workspace.set(w);
    Ok(be.workspace.get().expect("just set"))
}

pub(crate) fn run(be: &CudaBackend, d: &DeviceProblem, path: &GemmPath) -> Result<()> {
    poison(&be.gpu, d)?;
    launch(be, d, path)?;
    be.gpu.sync()
}

pub(crate) fn download(gpu: &Gpu, d: &DeviceProblem) -> Result<Output> {
    let s = d.shape;
    let bytes = gpu.download(&d.c)?;
    let used = &bytes[..s.m * s.n * s.out_dtype.bytes()];
    let u16s = || used.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
    Ok(match s.out_dtype {
        OutDtype::Bf16 => Output::Bf16(u16s().map(bf16::from_bits).collect()),
        OutDtype::F16 => Output::F16(u16s().map(f16::from_bits).collect()),
        OutDtype::F32 => Output::F32(used.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
    })
}

/// Runs `launch_one(i)` for i over `copies` rotating input sets: warm-up, then per repeat one
/// pass over all copies between two events; returns seconds per launch for each repeat.
/// With `Launches::Graph` the pass is captured once and replayed, as the anchors were timed;
/// a capture failure is an error, never a silent switch to eager launches.
pub(crate) fn time_rotating(gpu: &Gpu, copies: usize, t: &TimingOptions, launch_one: impl Fn(usize) -> Result<()>) -> Result<Vec<f64>> {
    // Eager warm-up also loads modules and allocates the workspace, which capture forbids.
    for w in 0..t.warmup.max(1) {
        launch_one(w % copies)?;
    }
    gpu.sync()?;
    let graph = match t.launches {
        Launches::Graph => Some(capture(gpu, copies, &launch_one)?),
        Launches::Eager => None,
    };
    let start = gpu.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).dev("cuEventCreate")?;
    let end = gpu.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT)).dev("cuEventCreate")?;
    let mut out = Vec::with_capacity(t.repeats);
    for _ in 0..t.repeats.max(1) {
        start.record(&gpu.stream).dev("cuEventRecord")?;
        match &graph {
            Some(g) => g.launch().dev("cuGraphLaunch")?,
            None => (0..copies).try_for_each(&launch_one)?,
        }
        end.record(&gpu.stream).dev("cuEventRecord")?;
        let ms = start.elapsed_ms(&end).dev("cuEventElapsedTime")?;
        out.push(ms as f64 * 1e-3 / copies as f64);
    }
    Ok(out)
}

/// Captures one pass over the copies into an instantiated, uploaded graph and replays it once
/// (the first replay of a graph pays setup the timed ones should not).
fn capture(gpu: &Gpu, copies: usize, launch_one: &impl Fn(usize) -> Result<()>) -> Result<CudaGraph> {
    let st = &gpu.stream;
    st.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).dev("cuStreamBeginCapture")?;
    let launched = (0..copies).try_for_each(launch_one);
    // Capture must end even after a failed launch, or the stream stays unusable.
    let ended = st.end_capture(sys::CUgraphInstantiate_flags(0)).dev("cuStreamEndCapture/cuGraphInstantiate");
    launched?;
    let graph = ended?.ok_or_else(|| Error::Device { backend: "cuda", call: "cuStreamEndCapture".into(), reason: "the capture recorded no work".into() })?;
    if log::log_enabled!(log::Level::Debug) {
        let mut nodes = 0usize;
        // SAFETY: a valid graph owned by `graph`; a null node array asks for the count only.
        unsafe { sys::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut nodes) }.result().dev("cuGraphGetNodes")?;
        log::debug!("timing graph: {copies} rotating copies captured as {nodes} nodes");
    }
    graph.upload().dev("cuGraphUpload")?;
    graph.launch().dev("cuGraphLaunch")?;
    gpu.sync()?;
    Ok(graph)
}

pub(crate) fn time(be: &CudaBackend, p: &GemmProblem, path: &GemmPath, t: &TimingOptions) -> Result<Vec<f64>> {
    let vendor = matches!(path, GemmPath::Vendor);
    let first = DeviceProblem::upload(&be.gpu, p, vendor, needs_split_ws(be, &p.shape, path))?;
    let copies = t.rotate_bytes.div_ceil(first.bytes()).clamp(1, 32);
    let mut sets = vec![first];
    for _ in 1..copies {
        let d = sets[0].duplicate(&be.gpu)?;
        sets.push(d);
    }
    if vendor {
        // Plan once, outside the timed region (as a caller holding a plan would).
        let h = be.lt.as_ref().map_err(|w| Error::Unsupported { path: "cuda vendor".into(), reason: w.clone() })?;
        let s = p.shape;
        let plan = cublaslt::LtPlan::new(h, s.padded_m(), s.n, s.k, s.out_dtype)?;
        let ws = ptr(workspace(be)?, &be.gpu.stream);
        let st = &be.gpu.stream;
        return time_rotating(&be.gpu, copies, t, |i| {
            let d = &sets[i];
            // SAFETY: vendor-layout buffers from upload(); workspace of WORKSPACE_BYTES.
            unsafe { plan.run(h, ptr(&d.b, st), ptr(&d.b_scales, st), ptr(&d.a, st), ptr(&d.a_scales, st), ptr(&d.c, st), ws, st.cu_stream() as _) }
        });
    }
    time_rotating(&be.gpu, copies, t, |i| launch(be, &sets[i], path))
}
