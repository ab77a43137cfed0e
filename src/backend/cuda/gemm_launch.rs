//! The GEMM launches of the CUDA backend on raw device addresses and the caller's stream:
//! the crate's kernels (TMA/wgmma or mma.sync, split K finished by a conversion launch) and
//! cuBLASLt's block-scaled FP8 (with the row padding and scale layout it needs staged in the
//! plan's workspace). Also the timing loop the benches use (graph replay over rotating copies).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaGraph};

use super::kernels::{self, GemmInstance};
use super::runtime::{arg, DriverResultExt, Function, Gpu};
use super::cublaslt::{self, LtHandle, LtPlan};
use crate::backend::{GemmLaunch, GemmLaunchArgs, Launches, TimingOptions};
use crate::config::KernelConfig;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::types::{GemmShape, OutDtype, ScaleLayout};

/// The crate's kernel for one (N, K, output), resolved: function handles, the CTA count rule
/// inputs and the K-split rule.
pub(crate) struct KernelLaunch {
    pub gpu: Arc<Gpu>,
    pub shape: GemmShape,
    pub cfg: KernelConfig,
    pub inst: &'static GemmInstance,
    pub function: Function,
    /// The split-K conversion, loaded up front (once sums are in the workspace nothing may stop it).
    pub convert: Function,
    pub sms: u32,
    /// Resident CTAs per SM (or clusters on the device) of this kernel, asked once.
    pub resident: u32,
    /// The last TMA descriptors made, by (address, rows): an engine enqueues on the same
    /// buffers step after step, and encoding a descriptor costs host time every launch.
    pub maps: Mutex<MapCache>,
    pub split_rule: kernels::SplitRule,
}

/// One descriptor per operand, kept for the next launch on the same memory.
#[derive(Default)]
pub(crate) struct MapCache {
    a: Option<(OperandMapKey, sys::CUtensorMap)>,
    b: Option<(OperandMapKey, sys::CUtensorMap)>,
    a_scales: Option<(ScaleMapKey, sys::CUtensorMap)>,
    c: Option<(OperandMapKey, sys::CUtensorMap)>,
    c_last: Option<(OperandMapKey, sys::CUtensorMap)>,
}

/// What an operand's descriptor was made for: address and rows (the rest is fixed per launch).
type OperandMapKey = (u64, usize);

/// What an activation-scale descriptor was made for: address, M, strides (row, K block), box.
type ScaleMapKey = (u64, usize, usize, usize, [u32; 2]);

/// The map cached in `slot` if it was made for `key`, else `encode()`'s (kept for next time).
fn cached_map<K: PartialEq>(slot: &mut Option<(K, sys::CUtensorMap)>, key: K, encode: impl FnOnce() -> Result<sys::CUtensorMap>) -> Result<sys::CUtensorMap> {
    if let Some((k, map)) = slot {
        if *k == key {
            return Ok(*map);
        }
    }
    let map = encode()?;
    *slot = Some((key, map));
    Ok(map)
}

impl KernelLaunch {
    fn splits(&self, m: usize) -> u32 {
        self.split_rule.splits(&GemmShape { m, ..self.shape }, self.sms)
    }
}

impl GemmLaunch for KernelLaunch {
    fn describe(&self) -> String {
        format!("cuda kernel {} ({})", self.cfg.short(), self.inst.symbol)
    }

    fn workspace_bytes(&self, m: usize) -> usize {
        if self.splits(m) > 1 {
            4 * m * self.shape.n
        } else {
            0
        }
    }

    unsafe fn enqueue(&self, stream: &Stream, d: &GemmLaunchArgs) -> Result<()> {
        let s = GemmShape { m: d.m, ..self.shape };
        let inst = self.inst;
        let st = stream.raw() as sys::CUstream;
        let (as_m, as_kb) = (d.a_scale_strides.0 as i32, d.a_scale_strides.1 as i32);
        let (m, n, k, gm) = (s.m as i32, s.n as i32, s.k as i32, self.cfg.group_m.max(1) as i32);
        let tiles = kernels::tile_groups(inst.block_m, inst.block_n, 1, &s);
        let splits = self.splits(s.m);
        if tiles as u64 * splits as u64 > i32::MAX as u64 {
            return Err(Error::shape("gemm", format!("{tiles} tiles x {splits} K splits exceed 32-bit work indexing")));
        }
        if splits > 1 && d.workspace_bytes < 4 * s.m * s.n {
            return Err(Error::Unsupported { path: self.describe(), reason: format!("split-K workspace of {} bytes, {} needed", d.workspace_bytes, 4 * s.m * s.n) });
        }
        let (a, as_, b, bs, c, ws) = (d.a, d.a_scales, d.b, d.b_scales, d.c, d.workspace);
        let grid = (tiles as u32, splits, 1);
        if inst.body == "mma" {
            let mut args = [arg(&a), arg(&as_), arg(&b), arg(&bs), arg(&c), arg(&ws), arg(&m), arg(&n), arg(&k), arg(&as_m), arg(&as_kb), arg(&gm)];
            // SAFETY: matches gemm_block_fp8_body's parameters; the plan checked the buffers.
            self.gpu.launch_on(&self.function, grid, (inst.threads, 1, 1), inst.smem_bytes, st, &mut args)?;
        } else {
            // In a multicast cluster each CTA loads its share of the weight tile (and multicasts
            // it); a pair that splits K loads whole tiles of its half of the K range.
            let cluster = inst.cluster.max(1);
            let multicast = if inst.cluster_splits_k { 1 } else { cluster };
            // Scale TMAs: per stage on the two-consumer normal tiles (TmaTile::AS_TMA), per tile
            // on the one-consumer deep rings when a tile's K range fits the box (AS_SLAB).
            let layout_load = kernels::scale_load(as_, s.m, s.k_blocks(), d.a_scale_strides);
            // (A K-split pair's CTAs each take half of a split's range.)
            let parts = splits as usize * if inst.cluster_splits_k { 2 } else { 1 };
            let slab_k_blocks = if inst.scale_slab { kernels::scale_slab_k_blocks(layout_load, s.k_blocks(), parts) } else { None };
            let load = if inst.scale_tma || slab_k_blocks.is_some() { layout_load } else { kernels::ScaleLoad::CpAsync };
            let scale_box = match (load, slab_k_blocks) {
                (kernels::ScaleLoad::TmaRows, None) => [4, inst.block_m],
                (kernels::ScaleLoad::TmaRows, Some(k_blocks)) => [k_blocks, inst.block_m],
                (_, None) => [inst.block_m, 1],
                (_, Some(k_blocks)) => [inst.block_m, k_blocks],
            };
            let c_box = kernels::c_store_box(inst.c_box, s.out_dtype, splits, s.n, c);
            let (tma_a, tma_b, tma_as, tma_c, tma_c_last) = {
                let mut maps = self.maps.lock().unwrap_or_else(|e| e.into_inner());
                let maps = &mut *maps;
                let tma_as = match load {
                    // SAFETY: CUtensorMap is plain bytes; the kernel reads none of them under cp.async loads.
                    kernels::ScaleLoad::CpAsync => unsafe { std::mem::zeroed() },
                    _ => cached_map(&mut maps.a_scales, (as_, s.m, d.a_scale_strides.0, d.a_scale_strides.1, scale_box), || {
                        tensor_map_scales(load, as_, s.m, s.k_blocks(), d.a_scale_strides, scale_box)
                    })?,
                };
                let (tma_c, tma_c_last) = match c_box {
                    Some(cols) => (
                        cached_map(&mut maps.c, (c, s.m), || tensor_map_c(c, s.m, s.n, s.out_dtype, cols, kernels::C_BOX_ROWS))?,
                        if inst.store_warp {
                            cached_map(&mut maps.c_last, (c, s.m), || tensor_map_c(c, s.m, s.n, s.out_dtype, cols, kernels::C_LAST_BOX_ROWS))?
                        } else {
                            // SAFETY: plain bytes; only store-warp tiles (TmaTile::STORE_WARP) read this map.
                            unsafe { std::mem::zeroed() }
                        },
                    ),
                    // SAFETY: plain bytes; the kernel reads no C map when c_by_tma is 0.
                    None => unsafe { (std::mem::zeroed(), std::mem::zeroed()) },
                };
                let tma_a = cached_map(&mut maps.a, (a, s.m), || tensor_map_fp8(a, s.m, s.k, inst.block_m))?;
                let tma_b = cached_map(&mut maps.b, (b, s.n), || tensor_map_fp8(b, s.n, s.k, inst.block_n / multicast))?;
                (tma_a, tma_b, tma_as, tma_c, tma_c_last)
            };
            let c_by_tma = c_box.is_some() as i32;
            let load_arg = kernels::scale_load_arg(load, slab_k_blocks, bs, s.k_blocks());
            let split_arg = splits as i32;
            // Persistent: one CTA per resident slot, each looping over tiles x splits; clusters
            // loop over groups of `cluster` vertically adjacent tiles (K-split pairs over tiles).
            let ctas = if cluster > 1 {
                let groups = kernels::tile_groups(inst.block_m, inst.block_n, multicast, &s) as u64 * splits as u64;
                (kernels::persistent_ctas(groups, self.resident as u64) * cluster as u64) as u32
            } else {
                let work = tiles as u64 * splits as u64;
                kernels::persistent_ctas(work, self.sms.max(1) as u64 * self.resident.max(1) as u64) as u32
            };
            let mut args = [
                arg(&tma_a),
                arg(&tma_b),
                arg(&tma_as),
                arg(&tma_c),
                arg(&tma_c_last),
                arg(&as_),
                arg(&bs),
                arg(&c),
                arg(&ws),
                arg(&m),
                arg(&n),
                arg(&k),
                arg(&as_m),
                arg(&as_kb),
                arg(&gm),
                arg(&split_arg),
                arg(&load_arg),
                arg(&c_by_tma),
            ];
            // SAFETY: matches the TMA kernel's parameters (five CUtensorMaps by value, then as
            // gemm_block_fp8_body's, then the split count, the scale load and the C store); the
            // maps describe A, B, the activation scales when `load` names a TMA, and C (in boxes
            // of a warp's rows, and of a tile's for a store-warp CTA's last tile) when c_by_tma
            // is 1.
            launch_maybe_dependent(&self.gpu, &self.function, (ctas, 1, 1), (inst.threads, 1, 1), inst.smem_bytes, st, &mut args)?;
        }
        if splits > 1 {
            let count = (s.m * s.n) as i64;
            let blocks = (s.m * s.n).div_ceil(256).min(self.sms as usize * 16) as u32;
            let mut cargs = [arg(&ws), arg(&c), arg(&count)];
            // SAFETY: matches sm90_splitk_convert_*(float*, OutT*, long long); ws and C hold M*N.
            // (A dependent launch too, which lets the next GEMM launch at its start: launched
            // plainly, it held the next dependent GEMM back, 0.7-1% slower than no dependent
            // launches at M = 8 on the H200.)
            launch_maybe_dependent(&self.gpu, &self.convert, (blocks, 1, 1), (256, 1, 1), 0, st, &mut cargs)?;
        }
        Ok(())
    }
}

/// Whether the TMA GEMM and its split-K conversion are programmatic dependent launches, so
/// that a launch's set-up overlaps the tail of the kernel before it on the stream (H200: 4-10%
/// at M = 8-128 with N = 4096 or K <= 1536, 7-25% on decode shapes, level at large M).
/// `BLOCKFP8_PDL=0` (or `off`, `false`) launches them plainly.
fn programmatic_launch() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let on = !matches!(std::env::var(PDL_ENV).ok().as_deref().map(str::trim), Some("0" | "off" | "false"));
        log::debug!("GEMM launches as programmatic dependent launches: {on} ({PDL_ENV})");
        on
    })
}

/// Turns the programmatic dependent launches off (`0`, `off`, `false`).
const PDL_ENV: &str = "BLOCKFP8_PDL";

/// Launches the TMA GEMM or the split-K conversion on `stream`: a programmatic dependent launch
/// unless `BLOCKFP8_PDL` turns those off.
///
/// # Safety
/// As [`Gpu::launch_programmatic_on`] (both kernels wait before touching global memory).
unsafe fn launch_maybe_dependent(gpu: &Gpu, f: &Function, grid: (u32, u32, u32), block: (u32, u32, u32), smem: u32, stream: sys::CUstream, args: &mut [*mut c_void]) -> Result<()> {
    if programmatic_launch() {
        gpu.launch_programmatic_on(f, grid, block, smem, stream, args)
    } else {
        gpu.launch_on(f, grid, block, smem, stream, args)
    }
}

/// cuBLASLt's block-scaled FP8 for one (N, K, output): plans per padded M, created on first
/// use of each (host work only) and kept.
pub(crate) struct VendorLaunch {
    pub gpu: Arc<Gpu>,
    pub lt: Arc<LtHandle>,
    pub shape: GemmShape,
    pub layout: ScaleLayout,
    pub plans: Mutex<HashMap<usize, LtPlan>>,
    pub to_column_major: Function,
}

/// Byte offsets of the vendor path's staging areas inside the plan's workspace.
struct Staging {
    a: usize,
    scales: usize,
    c: usize,
    end: usize,
}

fn align256(v: usize) -> usize {
    v.div_ceil(256) * 256
}

impl VendorLaunch {
    fn staging(&self, m: usize) -> Staging {
        let s = GemmShape { m, ..self.shape };
        let mp = s.padded_m();
        let a = cublaslt::WORKSPACE_BYTES;
        let scales = a + align256(mp * s.k);
        let c = scales + align256(4 * mp * s.k_blocks());
        Staging { a, scales, c, end: c + align256(mp * s.n * s.out_dtype.bytes()) }
    }

    /// The cuBLASLt plan for `mp` rows, made on first use.
    pub fn with_plan<R>(&self, mp: usize, f: impl FnOnce(&LtPlan) -> Result<R>) -> Result<R> {
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        let plan = match plans.entry(mp) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(LtPlan::new(&self.lt, mp, self.shape.n, self.shape.k, self.shape.out_dtype)?),
        };
        f(plan)
    }
}

impl GemmLaunch for VendorLaunch {
    fn describe(&self) -> String {
        "cuBLASLt block-scaled FP8".into()
    }

    fn workspace_bytes(&self, m: usize) -> usize {
        self.staging(m).end
    }

    /// The staging areas grow with M.
    fn workspace_bound(&self, max_m: usize) -> usize {
        self.workspace_bytes(max_m)
    }

    unsafe fn enqueue(&self, stream: &Stream, d: &GemmLaunchArgs) -> Result<()> {
        let s = GemmShape { m: d.m, ..self.shape };
        let (mp, kb) = (s.padded_m(), s.k_blocks());
        let st = stream.raw() as sys::CUstream;
        let stage = self.staging(d.m);
        if d.workspace_bytes < stage.end {
            return Err(Error::Unsupported { path: self.describe(), reason: format!("workspace of {} bytes, {} needed", d.workspace_bytes, stage.end) });
        }
        if d.b_scales_vendor == 0 {
            return Err(Error::invalid("gemm", "the weight has no cuBLASLt scale layout (prepare it on this context)"));
        }
        let ws = d.workspace;
        // cuBLASLt reads M rounded up to 4 rows and M-major scales of that many rows.
        let padded_rows = mp != d.m;
        let (x, x_scales, out) = (
            if padded_rows { ws + stage.a as u64 } else { d.a },
            if self.layout == ScaleLayout::ColumnMajor { d.a_scales } else { ws + stage.scales as u64 },
            if padded_rows { ws + stage.c as u64 } else { d.c },
        );
        if padded_rows {
            result::memcpy_dtod_async(x, d.a, d.m * d.k, st).dev("cuMemcpyDtoDAsync(A to padded rows)")?;
        }
        if self.layout == ScaleLayout::RowMajor {
            let (mi, gi, mpi, sm, sg) = (d.m as i32, kb as i32, mp as i32, d.a_scale_strides.0 as i32, d.a_scale_strides.1 as i32);
            let mut args = [arg(&d.a_scales), arg(&x_scales), arg(&mi), arg(&gi), arg(&mpi), arg(&sm), arg(&sg)];
            let blocks = (mp * kb).div_ceil(256) as u32;
            // SAFETY: matches sm90_act_scales_to_column_major; source holds M x G scales at the
            // strides given, the staging area kb * mp floats.
            self.gpu.launch_on(&self.to_column_major, (blocks, 1, 1), (256, 1, 1), 0, st, &mut args)?;
        }
        let lt_ws = ws;
        self.with_plan(mp, |plan| {
            // SAFETY: weight and activations laid out as cuBLASLt reads them (above); the
            // workspace's first WORKSPACE_BYTES are cuBLASLt's.
            plan.run(&self.lt, d.b, d.b_scales_vendor, x, x_scales, out, lt_ws, st as _)
        })?;
        if padded_rows {
            result::memcpy_dtod_async(d.c, out, d.m * d.n * s.out_dtype.bytes(), st).dev("cuMemcpyDtoDAsync(C from padded rows)")?;
        }
        Ok(())
    }
}

/// The activation-scale map of an M x `kb` grid at `strides` (row, K block) for a TMA `load`.
fn tensor_map_scales(load: kernels::ScaleLoad, addr: u64, m: usize, kb: usize, strides: (usize, usize), boxes: [u32; 2]) -> Result<sys::CUtensorMap> {
    match load {
        kernels::ScaleLoad::TmaRows => tensor_map_f32(addr, [kb, m], strides.0, boxes),
        _ => tensor_map_f32(addr, [m, kb], strides.1, boxes),
    }
}

/// C [m, n] of 16-bit outputs, stored in boxes of `box_rows` x `box_cols` columns from rows of
/// 2 * box_cols bytes in the matching swizzle (TmaTile::C_BOX in cuda/gemm_sm90_tma.cuh).
fn tensor_map_c(base: u64, m: usize, n: usize, out: OutDtype, box_cols: u32, box_rows: u32) -> Result<sys::CUtensorMap> {
    use sys::{CUtensorMapDataType as D, CUtensorMapL2promotion as L, CUtensorMapSwizzle as S};
    let swizzle = match box_cols {
        64 => S::CU_TENSOR_MAP_SWIZZLE_128B,
        32 => S::CU_TENSOR_MAP_SWIZZLE_64B,
        _ => S::CU_TENSOR_MAP_SWIZZLE_32B,
    };
    let dtype = match out {
        OutDtype::F16 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        _ => D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    };
    let layout = MapLayout { dims: [n, m], pitch_bytes: 2 * n, boxes: [box_cols, box_rows], swizzle, l2: L::CU_TENSOR_MAP_L2_PROMOTION_NONE };
    encode_2d(base, dtype, &layout, "cuTensorMapEncodeTiled (C)")
}

/// A 2-D fp32 map: `dims` (inner, outer) elements, outer pitch `pitch` elements, `boxes`
/// (inner, outer); elements past either end load as zeros.
fn tensor_map_f32(base: u64, dims: [usize; 2], pitch: usize, boxes: [u32; 2]) -> Result<sys::CUtensorMap> {
    use sys::{CUtensorMapDataType as D, CUtensorMapL2promotion as L, CUtensorMapSwizzle as S};
    let layout = MapLayout { dims, pitch_bytes: 4 * pitch, boxes, swizzle: S::CU_TENSOR_MAP_SWIZZLE_NONE, l2: L::CU_TENSOR_MAP_L2_PROMOTION_NONE };
    encode_2d(base, D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32, &layout, "cuTensorMapEncodeTiled (activation scales)")
}

/// A [rows, k] fp8 operand in boxes of 128 bytes x `box_rows`, in the 128-byte swizzle the
/// wgmma descriptors expect.
fn tensor_map_fp8(base: u64, rows: usize, k: usize, box_rows: u32) -> Result<sys::CUtensorMap> {
    use sys::{CUtensorMapDataType as D, CUtensorMapL2promotion as L, CUtensorMapSwizzle as S};
    let layout = MapLayout { dims: [k, rows], pitch_bytes: k, boxes: [128, box_rows], swizzle: S::CU_TENSOR_MAP_SWIZZLE_128B, l2: L::CU_TENSOR_MAP_L2_PROMOTION_L2_256B };
    encode_2d(base, D::CU_TENSOR_MAP_DATA_TYPE_UINT8, &layout, "cuTensorMapEncodeTiled")
}

/// A 2-D tiled map's shape: (inner, outer) elements, the outer pitch, the box, the swizzle and
/// the L2 promotion.
struct MapLayout {
    dims: [usize; 2],
    pitch_bytes: usize,
    boxes: [u32; 2],
    swizzle: sys::CUtensorMapSwizzle,
    l2: sys::CUtensorMapL2promotion,
}

fn encode_2d(base: u64, dtype: sys::CUtensorMapDataType, l: &MapLayout, what: &str) -> Result<sys::CUtensorMap> {
    use sys::{CUtensorMapFloatOOBfill as F, CUtensorMapInterleave as I};
    let dims = [l.dims[0] as u64, l.dims[1] as u64];
    let strides = [l.pitch_bytes as u64];
    let elem = [1u32, 1];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: every array has the length the rank (2) requires; `map` is writable and aligned.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dtype,
            2,
            base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            l.boxes.as_ptr(),
            elem.as_ptr(),
            I::CU_TENSOR_MAP_INTERLEAVE_NONE,
            l.swizzle,
            l.l2,
            F::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()
        .dev(what)?;
        Ok(map.assume_init())
    }
}

pub(crate) fn log_unaligned_once(cfg: &crate::config::KernelConfig, fallback: &crate::config::KernelConfig, k: usize) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| log::info!("cuda: K={k} is not a multiple of 16, which TMA needs: config {} runs as {} (mma.sync)", cfg.short(), fallback.short()));
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
        // A graph replay is timed behind another one: the GPU is still busy with the first when
        // the start event comes up, so the host's submission of the timed replay (which the GPU
        // would otherwise wait for after the start event) is not counted. Eager passes are timed
        // as issued, host included: their launch cost is what they measure.
        if let Some(g) = &graph {
            g.launch().dev("cuGraphLaunch")?;
        }
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

