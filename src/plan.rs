//! GEMM plans: for one (device, N, K, block, format, output dtype, activation-scale layout),
//! every batch-size entry of the tuned file (or the default path) resolved once to what it
//! launches, with the workspace allocated up front. [`GemmPlan::enqueue`] then checks its
//! arguments in O(1) and launches on the caller's stream: no allocation, no host wait.
#![warn(missing_docs)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::backend::{Backend, GemmLaunch, GemmLaunchArgs};
use crate::config::{ConfigTable, Library};
use crate::error::{Error, Result};
use crate::formats::Fp8Format;
use crate::memory::{DeviceBuffer, DeviceElem, DeviceView, DeviceViewMut};
use crate::stream::Stream;
use crate::types::{DeviceId, GemmPath, GemmShape, OutDtype, ScaleLayout};
use crate::weight::PreparedWeight;

/// Environment variable choosing the path for shapes with no tuned file: `vendor` (the
/// default: rocBLAS on AMD, cuBLASLt on NVIDIA) or `kernel` (the crate's kernel default).
pub const DEFAULT_PATH_ENV: &str = "BLOCKFP8_DEFAULT_PATH";

/// The path for shapes no tuned file covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DefaultPath {
    /// The vendor BLAS, falling back to the kernel default where it cannot serve.
    #[default]
    Vendor,
    /// The crate's kernel with its default config.
    Kernel,
}

impl DefaultPath {
    /// From [`DEFAULT_PATH_ENV`]; an unknown value is a warning and the vendor default.
    pub fn from_env() -> Self {
        match std::env::var(DEFAULT_PATH_ENV) {
            Err(_) => DefaultPath::Vendor,
            Ok(v) => v.parse().unwrap_or_else(|e| {
                log::warn!("{e}; using the vendor default");
                DefaultPath::Vendor
            }),
        }
    }
}

impl std::str::FromStr for DefaultPath {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "vendor" | "" => Ok(DefaultPath::Vendor),
            "kernel" => Ok(DefaultPath::Kernel),
            other => Err(Error::invalid("default path", format!("{DEFAULT_PATH_ENV}={other:?} (expected vendor or kernel)"))),
        }
    }
}

/// Chooses paths: tuned file entry for the nearest M (or the vendor path it records), else the
/// no-file default; a path the backend cannot serve falls back, and each reason is logged once.
pub struct PathChooser {
    backend: Arc<dyn Backend>,
    library: Arc<Library>,
    default: DefaultPath,
    logged: Mutex<HashSet<String>>,
}

impl PathChooser {
    /// Chooses paths on `backend` from `library`, with `default` for shapes no file covers.
    pub fn new(backend: Arc<dyn Backend>, library: Arc<Library>, default: DefaultPath) -> Self {
        PathChooser { backend, library, default, logged: Mutex::new(HashSet::new()) }
    }

    /// The config library it reads.
    pub fn library(&self) -> &Arc<Library> {
        &self.library
    }

    fn log_once(&self, key: String, msg: impl FnOnce() -> String) {
        let mut seen = self.logged.lock().unwrap_or_else(|e| e.into_inner());
        if seen.insert(key) {
            log::info!("{}", msg());
        }
    }

    /// The tuned table for the shape's N and K on this device, if a file has one.
    pub fn table(&self, shape: &GemmShape) -> Option<Arc<ConfigTable>> {
        self.library.lookup(&self.backend.device().config_name(), shape.n, shape.k, "fp8_w8a8", shape.block)
    }

    /// The path for `shape` (its M picks the table entry).
    pub fn choose(&self, shape: &GemmShape) -> GemmPath {
        let key = format!("{}:{}x{}", self.backend.device().config_name(), shape.n, shape.k);
        if let Some(table) = self.table(shape) {
            if let Some((m_key, cfg)) = table.nearest(shape.m) {
                if cfg.prefers_vendor() {
                    if self.backend.supports(shape, &GemmPath::Vendor).is_ok() {
                        return GemmPath::Vendor;
                    }
                } else {
                    let path = GemmPath::Tuned(cfg.clone());
                    match self.backend.supports(shape, &path) {
                        Ok(()) => return path,
                        Err(why) => self.log_once(format!("{key}:{m_key}:tuned"), || {
                            format!("tuned config for N={} K={} M~{m_key} ({}) not usable: {why}; using the default path", shape.n, shape.k, cfg.short())
                        }),
                    }
                }
            }
        }
        self.default_path(shape, &key)
    }

    fn default_path(&self, shape: &GemmShape, key: &str) -> GemmPath {
        if self.default == DefaultPath::Kernel {
            self.log_once(format!("{key}:kernel"), || format!("N={} K={}: no tuned config; {DEFAULT_PATH_ENV}=kernel: using the kernel's default config", shape.n, shape.k));
            return GemmPath::KernelDefault;
        }
        match self.backend.supports(shape, &GemmPath::Vendor) {
            Ok(()) => {
                self.log_once(format!("{key}:vendor"), || format!("N={} K={}: no tuned config, using the vendor BLAS path", shape.n, shape.k));
                GemmPath::Vendor
            }
            Err(why) => {
                self.log_once(format!("{key}:default"), || format!("N={} K={}: no tuned config and vendor path unavailable ({why}); using the kernel's default config", shape.n, shape.k));
                GemmPath::KernelDefault
            }
        }
    }
}

/// What a plan serves: everything about a product except M, plus the largest M its
/// workspace is sized for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmSpec {
    /// Output columns (weight rows).
    pub n: usize,
    /// The reduction length.
    pub k: usize,
    /// Weight block (block_n, block_k); activations use groups of block_k.
    pub block: (usize, usize),
    /// The fp8 flavour of A and the weight (the device's own on GPUs).
    pub format: Fp8Format,
    /// The dtype C is written in.
    pub out_dtype: OutDtype,
    /// The layout of the activation scales `enqueue` is given.
    pub a_layout: ScaleLayout,
    /// The largest M `enqueue` accepts without [`GemmPlan::reserve`].
    pub max_m: usize,
}

impl GemmSpec {
    /// The shape of a product of `m` rows.
    pub fn shape(&self, m: usize) -> GemmShape {
        GemmShape { m, n: self.n, k: self.k, block: self.block, format: self.format, out_dtype: self.out_dtype }
    }
}

/// One resolved batch-size entry.
struct Entry {
    m_key: usize,
    path: GemmPath,
    launch: Box<dyn GemmLaunch>,
}

struct Workspace {
    buffer: DeviceBuffer<u8>,
    max_m: usize,
}

/// A product resolved once; see the module doc. Enqueues of one plan share its workspace, so
/// work of one plan on several streams must not overlap (use one plan per stream for that).
pub struct GemmPlan {
    backend: Arc<dyn Backend>,
    spec: GemmSpec,
    /// Ascending M: the tuned file's entries (picked by nearest M), or without a file the
    /// default path resolved per power-of-two M bucket up to `max_m` (picked by the smallest
    /// bucket >= M), since the kernel default's tile depends on M.
    entries: Vec<Entry>,
    from_file: bool,
    workspace: Mutex<Workspace>,
}

impl std::fmt::Debug for GemmPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GemmPlan").field("spec", &self.spec).field("entries", &self.entries.len()).finish()
    }
}

impl GemmPlan {
    /// Resolves every entry for `spec` on `chooser`'s backend and allocates the workspace.
    pub fn new(chooser: &PathChooser, spec: GemmSpec) -> Result<Self> {
        let backend = Arc::clone(&chooser.backend);
        check_spec(&*backend, &spec)?;
        // Each entry is resolved for its own M (tiles, K splits and vendor plans depend on M);
        // the workspace is sized for the largest M the plan serves.
        let resolve = |m: usize| -> Result<Entry> {
            let shape = spec.shape(m);
            let path = chooser.choose(&shape);
            let launch = backend.resolve_gemm(&shape, &path, spec.a_layout)?;
            Ok(Entry { m_key: m, path, launch })
        };
        let (keys, from_file): (Vec<usize>, bool) = match chooser.table(&spec.shape(1)) {
            Some(table) if !table.entries.is_empty() => (table.entries.iter().map(|(m, _)| *m).collect(), true),
            _ => (std::iter::successors(Some(1usize), |b| (*b < spec.max_m).then(|| b * 2)).collect(), false),
        };
        let entries = keys.into_iter().map(resolve).collect::<Result<Vec<_>>>()?;
        for e in &entries {
            log::debug!("plan N={} K={} M~{}: {} ({})", spec.n, spec.k, e.m_key, e.path.label(), e.launch.describe());
        }
        let bytes = workspace_for(&entries, from_file, spec.max_m);
        let buffer = DeviceBuffer::from_raw(backend.alloc(bytes)?, bytes)?;
        Ok(GemmPlan { backend, spec, entries, from_file, workspace: Mutex::new(Workspace { buffer, max_m: spec.max_m }) })
    }

    /// What the plan serves.
    pub fn spec(&self) -> &GemmSpec {
        &self.spec
    }
    /// The device the plan launches on.
    pub fn device(&self) -> DeviceId {
        self.backend.id()
    }

    fn entry(&self, m: usize) -> &Entry {
        let i = if self.from_file {
            crate::config::table::nearest_key_index(self.entries.iter().map(|e| e.m_key), self.entries.len(), m).unwrap_or(0)
        } else {
            // Past the last bucket (after `reserve`) the last one serves: correct, its tile chosen for a smaller M.
            self.entries.partition_point(|e| e.m_key < m).min(self.entries.len() - 1)
        };
        &self.entries[i]
    }

    /// The path a product of `m` rows takes.
    pub fn path_for(&self, m: usize) -> &GemmPath {
        &self.entry(m).path
    }

    /// The largest M the workspace serves now.
    pub fn max_m(&self) -> usize {
        self.workspace.lock().unwrap_or_else(|e| e.into_inner()).max_m
    }

    /// Grows the workspace to serve up to `max_m` rows (the explicit call that allocates, so
    /// `enqueue` never does). Waits for `stream`, whose work may still use the old workspace.
    pub fn reserve(&self, stream: &Stream, max_m: usize) -> Result<()> {
        let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        if max_m <= ws.max_m {
            return Ok(());
        }
        check_rows(&self.spec, max_m)?;
        let bytes = workspace_for(&self.entries, self.from_file, max_m);
        if bytes > ws.buffer.len() {
            self.backend.synchronize(stream)?;
            ws.buffer = DeviceBuffer::from_raw(self.backend.alloc(bytes)?, bytes)?;
        }
        ws.max_m = max_m;
        Ok(())
    }

    /// Enqueues C = (A, As) x (B, Bs)^T on `stream`. M is `a.len() / K`. Checks, in O(1) and
    /// before any launch: lengths, alignment, devices (tensors, weight, stream), the weight's
    /// shape and format, the output element type and the workspace's M. Scale values are not
    /// read (a NaN scale gives NaN outputs); the host API checks them.
    pub fn enqueue<T: DeviceElem>(&self, stream: &Stream, a: DeviceView<'_, u8>, a_scales: DeviceView<'_, f32>, weight: &PreparedWeight, out: &mut DeviceViewMut<'_, T>) -> Result<()> {
        const OP: &str = "gemm enqueue";
        let s = &self.spec;
        let dev = self.device();
        let wrong = |what: &str, found: DeviceId| Error::WrongDevice { op: OP, what: what.into(), expected: dev.to_string(), found: found.to_string() };
        for (what, d) in [("stream", stream.device()), ("A", a.device()), ("activation scales", a_scales.device()), ("output", out.device()), ("weight", weight.device())] {
            if d != dev {
                return Err(wrong(what, d));
            }
        }
        if T::ELEM != s.out_dtype.elem() {
            return Err(Error::invalid(OP, format!("output view holds {} but the plan writes {}", T::ELEM.name(), s.out_dtype.name())));
        }
        if (weight.n(), weight.k(), weight.block()) != (s.n, s.k, s.block) {
            return Err(Error::shape(OP, format!("weight is {} x {} in {:?} blocks, the plan is for N={} K={} {:?}", weight.n(), weight.k(), weight.block(), s.n, s.k, s.block)));
        }
        if weight.format() != s.format {
            return Err(Error::invalid(OP, format!("weight was prepared as {:?}, the plan computes {:?}", weight.format(), s.format)));
        }
        if a.is_empty() || a.len() % s.k != 0 {
            return Err(Error::shape(OP, format!("A has {} bytes, not a positive multiple of K = {}", a.len(), s.k)));
        }
        let m = a.len() / s.k;
        let shape = s.shape(m);
        shape.check_size(OP)?;
        if out.len() != m * s.n {
            return Err(Error::shape(OP, format!("output has {} elements, expected M*N = {m}*{} = {}", out.len(), s.n, m * s.n)));
        }
        let kb = shape.k_blocks();
        let want_as = s.a_layout.scale_count(m, kb);
        if a_scales.len() != want_as {
            return Err(Error::shape(OP, format!("activation scales have {} values, expected {want_as} ({:?} layout, M={m}, ceil(K/{})={kb})", a_scales.len(), s.a_layout, s.block.1)));
        }
        let align = self.backend.alignment();
        for (what, addr) in [("A", a.addr()), ("activation scales", a_scales.addr()), ("output", out.addr())] {
            if addr % align as u64 != 0 {
                return Err(Error::Misaligned { op: OP, what: what.into(), addr, align });
            }
        }
        let entry = self.entry(m);
        let ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        let need = entry.launch.workspace_bytes(m);
        if need > ws.buffer.len() {
            return Err(Error::invalid(OP, format!("M={m} needs {need} workspace bytes; the plan holds {} (sized for M <= {}): call GemmPlan::reserve first", ws.buffer.len(), ws.max_m)));
        }
        let args = GemmLaunchArgs {
            m,
            n: s.n,
            k: s.k,
            a: a.addr(),
            a_scales: a_scales.addr(),
            a_scale_strides: s.a_layout.strides(m, kb),
            a_layout: s.a_layout,
            b: weight.q().addr(),
            b_scales: weight.scales().addr(),
            b_scales_vendor: weight.vendor_scales_addr(),
            c: out.addr(),
            workspace: ws.buffer.addr(),
            workspace_bytes: ws.buffer.len(),
        };
        // SAFETY: every view is of this device (checked above) and sized for the shape; the
        // views' lifetimes and the caller's stream order keep them alive; the workspace is the
        // plan's own and at least what this M needs.
        unsafe { entry.launch.enqueue(stream, &args) }
    }
}

/// The workspace a plan needs for M up to `max_m`: each entry bounded over the M it serves (a
/// file entry up to the midpoint to the next key, ties going down as `nearest` does; a bucket up
/// to itself; the last one up to `max_m`), so an entry whose K split is pinned for a small M does
/// not size the workspace for the largest M.
fn workspace_for(entries: &[Entry], from_file: bool, max_m: usize) -> usize {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let upper = match entries.get(i + 1) {
                None => max_m,
                Some(next) if from_file => (e.m_key + next.m_key) / 2,
                Some(_) => e.m_key,
            };
            e.launch.workspace_bound(upper.min(max_m).max(1))
        })
        .max()
        .unwrap_or(0)
}

/// The spec's own checks (no M yet).
fn check_spec(backend: &dyn Backend, s: &GemmSpec) -> Result<()> {
    const OP: &str = "gemm plan";
    if s.n == 0 || s.k == 0 || s.max_m == 0 {
        return Err(Error::shape(OP, format!("N, K and max M must be >= 1, got N={} K={} max M={}", s.n, s.k, s.max_m)));
    }
    if s.block.0 == 0 || s.block.1 == 0 {
        return Err(Error::invalid(OP, format!("block shape {:?} has a zero side", s.block)));
    }
    if backend.kind() != crate::BackendKind::Cpu && s.format != backend.device().fp8 {
        return Err(Error::invalid(OP, format!("inputs are {:?} but device {} computes in {:?}", s.format, backend.device().name, backend.device().fp8)));
    }
    check_rows(s, s.max_m)
}

fn check_rows(s: &GemmSpec, m: usize) -> Result<()> {
    s.shape(m).check_size("gemm plan")
}
