//! `blockfp8_context`: one device's [`Context`] with the GEMM plans resolved so far, per spec
//! (N, K, block, format, output dtype, scale layout) and M bucket, shared by every stream. Sharing is
//! what graph capture needs (a capture stream is new to the context, and a plan made during
//! capture would allocate); its cost is the crate's plan rule: products of one spec must not
//! run concurrently on two streams (serialize them, or use a second context).

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Arc, Mutex, Once};

use blockfp8::{Context, GemmPlan, GemmSpec, Stream};

use crate::codes;
use crate::error::{guard, FfiResult, Failure};

pub struct Blockfp8Context {
    pub ctx: Context,
    /// One plan per (spec without max M, power-of-two M bucket). A plan resolves its launches
    /// for its largest M (`GemmPlan::new`), so a bucket keeps small products off launches
    /// chosen for much larger ones, and a power-of-two M gets exactly the plan the host API
    /// (`BlockScaledGemm::run`, max M = M) makes.
    plans: Mutex<Plans>,
    name: CString,
    arch: CString,
    config_name: CString,
}

#[derive(Default)]
struct Plans {
    live: HashMap<(GemmSpec, usize), Arc<GemmPlan>>,
    /// Plans replaced by larger ones of their bucket (only where the bucket's own M did not
    /// fit): kept while the context lives, since enqueued work may still use their workspace.
    retired: Vec<Arc<GemmPlan>>,
}

/// What `blockfp8_context_info` fills in; the strings belong to the context.
#[repr(C)]
pub struct Blockfp8DeviceInfo {
    pub backend: i32,
    pub ordinal: u32,
    pub fp8_format: i32,
    pub compute_units: u32,
    pub alignment: u32,
    pub name: *const c_char,
    pub arch: *const c_char,
    pub config_name: *const c_char,
}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "?")).unwrap_or_default()
}

fn init_logging() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // RUST_LOG as for the crate's CLI; warnings only by default. A host program that set a
        // logger already keeps it.
        let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).try_init();
    });
}

impl Blockfp8Context {
    fn new(ctx: Context) -> Self {
        let d = ctx.device();
        let (name, arch, config_name) = (c_string(&d.name), c_string(&d.arch), c_string(&d.config_name()));
        Blockfp8Context { ctx, plans: Mutex::new(Plans::default()), name, arch, config_name }
    }

    /// A caller's stream handle as the crate's (never destroyed by it).
    pub fn stream(&self, raw: u64) -> FfiResult<Stream> {
        // SAFETY: the header requires a live stream of this device (or 0) for the call's duration
        // and until the work enqueued on it has run.
        Ok(unsafe { self.ctx.stream_from_raw(raw)? })
    }

    /// The plan serving `spec` (its `max_m` ignored) for `m` rows: that of M's power-of-two
    /// bucket, resolved (and its workspace allocated) on first use.
    pub fn plan(&self, spec: GemmSpec, m: usize) -> FfiResult<Arc<GemmPlan>> {
        let bucket = m.checked_next_power_of_two().unwrap_or(m);
        let key = (GemmSpec { max_m: 0, ..spec }, bucket);
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = plans.live.get(&key) {
            if p.max_m() >= m {
                return Ok(Arc::clone(p));
            }
        }
        let chooser = self.ctx.path_chooser();
        // The bucket's M may exceed the index limits or the memory that M itself fits in.
        let plan = GemmPlan::new(chooser, GemmSpec { max_m: bucket, ..spec }).or_else(|_| GemmPlan::new(chooser, GemmSpec { max_m: m, ..spec }));
        let plan = Arc::new(plan?);
        log::debug!("plan N={} K={} {:?} {:?} for M <= {}", spec.n, spec.k, spec.out_dtype, spec.a_layout, plan.max_m());
        if let Some(old) = plans.live.insert(key, Arc::clone(&plan)) {
            plans.retired.push(old);
        }
        Ok(plan)
    }

    /// Resolves every bucket's plan up to `max_m` rows, so no later product up to there allocates.
    pub fn reserve(&self, spec: GemmSpec, max_m: usize) -> FfiResult {
        let mut m = 1usize;
        while m < max_m {
            self.plan(spec, m)?;
            m *= 2;
        }
        self.plan(spec, max_m).map(|_| ())
    }
}

/// Borrows a context handle.
///
/// # Safety
/// `ctx` must be null or a live handle from `blockfp8_context_open*`.
pub unsafe fn context<'a>(ctx: *const Blockfp8Context) -> FfiResult<&'a Blockfp8Context> {
    ctx.as_ref().ok_or_else(|| Failure::null("context"))
}

/// Writes a new context handle to `out`.
///
/// # Safety
/// `out` must be null or writable.
unsafe fn hand_out(out: *mut *mut Blockfp8Context, open: impl FnOnce() -> FfiResult<Context>) -> FfiResult {
    if out.is_null() {
        return Err(Failure::null("out"));
    }
    *out = std::ptr::null_mut();
    init_logging();
    let ctx = open()?;
    log::info!("blockfp8 context on {} ({})", ctx.id(), ctx.device().name);
    *out = Box::into_raw(Box::new(Blockfp8Context::new(ctx)));
    Ok(())
}

/// Opens device `ordinal` of `backend`.
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_context_open(backend: i32, ordinal: u32, out: *mut *mut Blockfp8Context) -> i32 {
    guard("blockfp8_context_open", || hand_out(out, || Ok(Context::open(codes::backend(backend)?, ordinal as usize)?)))
}

/// Opens the best device present (ROCm, then CUDA, then the CPU).
///
/// # Safety
/// `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_context_open_best(out: *mut *mut Blockfp8Context) -> i32 {
    guard("blockfp8_context_open_best", || hand_out(out, || Ok(Context::best_available())))
}

/// Frees a context and its plans (null is ignored).
///
/// # Safety
/// `ctx` must be null or a live handle, not used afterwards, with no work pending that uses
/// its plans.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_context_destroy(ctx: *mut Blockfp8Context) {
    crate::free_handle(ctx)
}

/// Describes the context's device.
///
/// # Safety
/// `ctx` a live handle; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_context_info(ctx: *const Blockfp8Context, out: *mut Blockfp8DeviceInfo) -> i32 {
    guard("blockfp8_context_info", || {
        let c = context(ctx)?;
        let out = out.as_mut().ok_or_else(|| Failure::null("out"))?;
        let d = c.ctx.device();
        *out = Blockfp8DeviceInfo {
            backend: codes::backend_code(d.backend),
            ordinal: d.ordinal as u32,
            fp8_format: codes::fp8_code(d.fp8),
            compute_units: d.compute_units,
            alignment: c.ctx.backend().alignment() as u32,
            name: c.name.as_ptr(),
            arch: c.arch.as_ptr(),
            config_name: c.config_name.as_ptr(),
        };
        Ok(())
    })
}

/// Waits for the work enqueued on `stream`.
///
/// # Safety
/// `ctx` a live handle; `stream` a live stream of its device (or 0).
#[no_mangle]
pub unsafe extern "C" fn blockfp8_synchronize(ctx: *const Blockfp8Context, stream: u64) -> i32 {
    guard("blockfp8_synchronize", || {
        let c = context(ctx)?;
        let s = c.stream(stream)?;
        Ok(c.ctx.synchronize(&s)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use blockfp8::{BackendKind, Fp8Format, OutDtype, ScaleLayout};

    fn spec() -> GemmSpec {
        GemmSpec { n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16, a_layout: ScaleLayout::RowMajor, max_m: 1 }
    }

    #[test]
    fn plans_are_shared_within_a_power_of_two_bucket_and_never_replaced() {
        let c = Blockfp8Context::new(Context::open(BackendKind::Cpu, 0).unwrap());
        let p3 = c.plan(spec(), 3).unwrap();
        assert_eq!(p3.max_m(), 4);
        assert!(Arc::ptr_eq(&p3, &c.plan(spec(), 4).unwrap()));
        let p5 = c.plan(spec(), 5).unwrap();
        assert_eq!(p5.max_m(), 8);
        assert!(!Arc::ptr_eq(&p3, &p5));
        // Another output dtype or layout is another plan; max_m in the request is ignored.
        let f32_spec = GemmSpec { out_dtype: OutDtype::F32, max_m: 4096, ..spec() };
        assert!(!Arc::ptr_eq(&p3, &c.plan(f32_spec, 3).unwrap()));
        c.reserve(spec(), 100).unwrap();
        let plans = c.plans.lock().unwrap();
        let mut buckets: Vec<usize> = plans.live.keys().filter(|(s, _)| s.out_dtype == OutDtype::Bf16).map(|(_, b)| *b).collect();
        buckets.sort();
        assert_eq!(buckets, vec![1, 2, 4, 8, 16, 32, 64, 128]);
        assert!(plans.retired.is_empty());
    }
}
