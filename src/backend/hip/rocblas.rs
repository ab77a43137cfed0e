//! rocBLAS, loaded at run time with `libloading`: the crate builds and runs where rocBLAS is
//! absent, and says why the FP8 vendor path is unavailable. Only the few calls the
//! block-scaled vendor path needs are bound, with the signature and enum values of
//! rocBLAS 4.x (`rocblas-beta.h`; exported whether or not ROCBLAS_BETA_FEATURES_API is set).

use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::sync::{Arc, OnceLock};

use libloading::Library;

use super::runtime::{bind, DevicePtr, Stream};
use super::sys::hipStream_t;
use super::vendor_plan::BatchedGemm;
use crate::error::{Error, Result};

/// Environment variable naming the rocBLAS library file to load instead of the defaults.
pub const LIBRARY_ENV: &str = "BLOCKFP8_ROCBLAS";

pub const STATUS_SUCCESS: i32 = 0;
pub const DATATYPE_F16_R: i32 = 150;
pub const DATATYPE_F32_R: i32 = 151;
pub const DATATYPE_BF16_R: i32 = 168;
/// rocBLAS's f8 is e4m3fnuz (gfx94x).
pub const DATATYPE_F8_R: i32 = 170;
pub const DATATYPE_BF8_R: i32 = 171;
pub const COMPUTE_F32: i32 = 300;
pub const COMPUTE_F8_F8_F32: i32 = 301;
pub const GEMM_ALGO_STANDARD: i32 = 0;
pub const POINTER_MODE_HOST: i32 = 0;
pub const GEMM_FLAGS_NONE: u32 = 0;

/// `rocblas_status` names, 0..=15, for messages when the library cannot name a code.
const STATUS_NAMES: [&str; 16] = [
    "rocblas_status_success",
    "rocblas_status_invalid_handle",
    "rocblas_status_not_implemented",
    "rocblas_status_invalid_pointer",
    "rocblas_status_invalid_size",
    "rocblas_status_memory_error",
    "rocblas_status_internal_error",
    "rocblas_status_perf_degraded",
    "rocblas_status_size_query_mismatch",
    "rocblas_status_size_increased",
    "rocblas_status_size_unchanged",
    "rocblas_status_invalid_value",
    "rocblas_status_continue",
    "rocblas_status_check_numerics_fail",
    "rocblas_status_excluded_from_build",
    "rocblas_status_arch_mismatch",
];

pub fn status_name(status: i32) -> String {
    usize::try_from(status).ok().and_then(|i| STATUS_NAMES.get(i)).map_or_else(|| format!("rocblas_status {status}"), |n| format!("{n} ({status})"))
}

type RawHandle = *mut c_void;
type CreateHandleFn = unsafe extern "C" fn(*mut RawHandle) -> i32;
type DestroyHandleFn = unsafe extern "C" fn(RawHandle) -> i32;
type SetStreamFn = unsafe extern "C" fn(RawHandle, hipStream_t) -> i32;
type SetPointerModeFn = unsafe extern "C" fn(RawHandle, i32) -> i32;
type GetVersionStringFn = unsafe extern "C" fn(*mut c_char, usize) -> i32;
type StatusToStringFn = unsafe extern "C" fn(i32) -> *const c_char;
/// `rocblas_gemm_strided_batched_ex3`, argument for argument (rocblas_int = i32,
/// rocblas_stride = i64, enums = C int).
type GemmStridedBatchedEx3Fn = unsafe extern "C" fn(
    RawHandle,
    i32, // trans_a
    i32, // trans_b
    i32, // m
    i32, // n
    i32, // k
    *const c_void, // alpha
    *const c_void, // a
    i32, // a_type
    i32, // lda
    i64, // stride_a
    *const c_void, // b
    i32, // b_type
    i32, // ldb
    i64, // stride_b
    *const c_void, // beta
    *const c_void, // c
    i32, // c_type
    i32, // ldc
    i64, // stride_c
    *mut c_void, // d
    i32, // d_type
    i32, // ldd
    i64, // stride_d
    i32, // batch_count
    i32, // compute_type
    i32, // algo
    i32, // solution_index
    u32, // flags
) -> i32;

/// A loaded librocblas with the entry points this crate uses.
pub struct RocBlas {
    path: String,
    version: String,
    create_handle: CreateHandleFn,
    destroy_handle: DestroyHandleFn,
    set_stream: SetStreamFn,
    set_pointer_mode: SetPointerModeFn,
    status_to_string: Option<StatusToStringFn>,
    /// Absent in rocBLAS 5.x (ROCm 7), which removed FP8.
    gemm_strided_batched_ex3: Option<GemmStridedBatchedEx3Fn>,
    // Last, so the function pointers above are never used after the library unloads.
    _lib: Library,
}

/// The file names tried, in order: `$BLOCKFP8_ROCBLAS` alone when set, else the loader's
/// default search for the unversioned and versioned names, then ROCm install paths.
pub fn candidate_paths() -> Vec<String> {
    if let Ok(p) = std::env::var(LIBRARY_ENV) {
        return vec![p];
    }
    let mut c: Vec<String> = ["librocblas.so", "librocblas.so.4", "librocblas.so.5"].iter().map(|s| s.to_string()).collect();
    for root in [std::env::var("ROCM_PATH").ok(), Some("/opt/rocm".to_string())].into_iter().flatten() {
        c.push(format!("{root}/lib/librocblas.so"));
    }
    c
}

impl RocBlas {
    /// The process-wide library, loaded once; the error is the reason it is unusable.
    pub fn shared() -> std::result::Result<Arc<RocBlas>, String> {
        static LOADED: OnceLock<std::result::Result<Arc<RocBlas>, String>> = OnceLock::new();
        LOADED.get_or_init(|| RocBlas::load(&candidate_paths()).map(Arc::new)).clone()
    }

    /// Loads the first candidate that opens; "rocBLAS not found" with every attempt's
    /// error when none does.
    pub fn load(candidates: &[String]) -> std::result::Result<RocBlas, String> {
        let mut tried = Vec::new();
        for path in candidates {
            // SAFETY: loading runs the library's initialisers; librocblas's are sound to run.
            match unsafe { Library::new(path) } {
                Ok(lib) => return Self::bind_symbols(lib, path),
                Err(e) => tried.push(format!("{path}: {e}")),
            }
        }
        Err(format!("rocBLAS not found (tried {})", tried.join("; ")))
    }

    fn bind_symbols(lib: Library, path: &str) -> std::result::Result<RocBlas, String> {
        // SAFETY (all lookups): the types above are the C signatures of these symbols.
        unsafe fn sym<T: Copy>(lib: &Library, path: &str, name: &str) -> std::result::Result<T, String> {
            lib.get::<T>(name.as_bytes()).map(|s| *s).map_err(|e| format!("{path} is not a usable rocBLAS: missing {name} ({e})"))
        }
        unsafe {
            let get_version: GetVersionStringFn = sym(&lib, path, "rocblas_get_version_string")?;
            let mut buf = [0 as c_char; 256];
            let version = if get_version(buf.as_mut_ptr(), buf.len()) == STATUS_SUCCESS {
                CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
            } else {
                "unknown".to_string()
            };
            Ok(RocBlas {
                path: path.to_string(),
                version,
                create_handle: sym(&lib, path, "rocblas_create_handle")?,
                destroy_handle: sym(&lib, path, "rocblas_destroy_handle")?,
                set_stream: sym(&lib, path, "rocblas_set_stream")?,
                set_pointer_mode: sym(&lib, path, "rocblas_set_pointer_mode")?,
                status_to_string: sym(&lib, path, "rocblas_status_to_string").ok(),
                gemm_strided_batched_ex3: sym(&lib, path, "rocblas_gemm_strided_batched_ex3").ok(),
                _lib: lib,
            })
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    pub fn has_fp8_gemm(&self) -> bool {
        self.gemm_strided_batched_ex3.is_some()
    }

    /// "rocblas_status_invalid_size (4)", from the library when it names the code.
    pub fn status_text(&self, status: i32) -> String {
        if let Some(f) = self.status_to_string {
            // SAFETY: returns a static string for any code (or null, checked).
            let p = unsafe { f(status) };
            if !p.is_null() {
                let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
                return format!("{s} ({status})");
            }
        }
        status_name(status)
    }

    /// Why FP8 GEMM cannot run on `arch` with this library, if it cannot.
    pub fn fp8_unavailable(&self, arch: &str) -> Option<String> {
        fp8_unavailable_reason(&self.version, self.has_fp8_gemm(), arch)
    }

    fn check(&self, call: &'static str, status: i32) -> Result<()> {
        if status == STATUS_SUCCESS {
            Ok(())
        } else {
            Err(Error::Device { backend: "rocm", call: call.into(), reason: self.status_text(status) })
        }
    }
}

/// (major, minor) of a rocBLAS version string such as "4.2.4.b7a1f5c3".
pub fn parse_version(version: &str) -> Option<(u32, u32)> {
    let mut it = version.trim().split(['.', '-']);
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The decision behind the vendor path, separated from the library for testing: FP8 GEMM
/// exists in rocBLAS 4.x (ROCm 6.x) on gfx940/941/942 only.
pub fn fp8_unavailable_reason(version: &str, has_ex3: bool, arch: &str) -> Option<String> {
    let base = super::arch::base_arch(arch);
    if let Some((major, _)) = parse_version(version) {
        if major >= 5 {
            return Some(format!("rocBLAS {version} (5.x, ROCm 7) removed FP8"));
        }
    }
    if !has_ex3 {
        return Some(format!("rocBLAS {version} has no rocblas_gemm_strided_batched_ex3 (FP8 GEMM needs rocBLAS 4.x, ROCm 6.x)"));
    }
    if !super::arch::rocblas_fp8_arch(base) {
        return Some(format!("{base} has no rocBLAS FP8 (rocBLAS FP8 GEMM runs on gfx940/941/942 only)"));
    }
    None
}

/// A rocBLAS handle bound to one stream, host pointer mode. Not for concurrent use: the
/// backend serialises its calls.
pub struct Handle {
    raw: RawHandle,
    lib: Arc<RocBlas>,
    ordinal: usize,
}

// SAFETY: a rocBLAS handle may move between threads; the backend never uses it from two
// threads at once (it sits behind a mutex).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Handle {
    pub fn new(lib: Arc<RocBlas>, stream: &Stream) -> Result<Self> {
        bind(stream.ordinal())?;
        let mut raw = std::ptr::null_mut();
        lib.check("rocblas_create_handle", unsafe { (lib.create_handle)(&mut raw) })?;
        let handle = Handle { raw, lib, ordinal: stream.ordinal() };
        handle.lib.check("rocblas_set_stream", unsafe { (handle.lib.set_stream)(handle.raw, stream.raw()) })?;
        handle.lib.check("rocblas_set_pointer_mode", unsafe { (handle.lib.set_pointer_mode)(handle.raw, POINTER_MODE_HOST) })?;
        Ok(handle)
    }

    pub fn library(&self) -> &Arc<RocBlas> {
        &self.lib
    }

    /// Points the handle's work at `stream` (a caller's or the crate's), as every enqueue does.
    pub fn set_stream(&self, stream: hipStream_t) -> Result<()> {
        self.lib.check("rocblas_set_stream", unsafe { (self.lib.set_stream)(self.raw, stream) })
    }

    /// Enqueues one planned call: fnuz fp8 inputs, f32 output, alpha 1, beta 0, C = D.
    ///
    /// # Safety
    /// `weight`, `act` and `work` must be device buffers of this handle's device holding at
    /// least the extents of `call` ([`BatchedGemm::extents`]: weight, activations,
    /// workspace), alive until the stream has executed the call.
    pub unsafe fn gemm_f8_f32(&self, call: &BatchedGemm, weight: DevicePtr<u8>, act: DevicePtr<u8>, work: DevicePtr<f32>) -> Result<()> {
        let Some(gemm) = self.lib.gemm_strided_batched_ex3 else {
            return Err(Error::Unsupported { path: "rocBLAS".into(), reason: format!("rocBLAS {} lacks rocblas_gemm_strided_batched_ex3", self.lib.version) });
        };
        bind(self.ordinal)?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let a = weight.offset(call.a.offset);
        let b = act.offset(call.b.offset);
        let d = work.offset(call.d.offset);
        let st = gemm(
            self.raw,
            call.trans_a as i32,
            call.trans_b as i32,
            call.m,
            call.n,
            call.k,
            (&alpha as *const f32).cast(),
            a.as_raw(),
            DATATYPE_F8_R,
            call.a.ld,
            call.a.stride,
            b.as_raw(),
            DATATYPE_F8_R,
            call.b.ld,
            call.b.stride,
            (&beta as *const f32).cast(),
            d.as_raw(),
            DATATYPE_F32_R,
            call.d.ld,
            call.d.stride,
            d.as_raw(),
            DATATYPE_F32_R,
            call.d.ld,
            call.d.stride,
            call.batch_count,
            COMPUTE_F8_F8_F32,
            GEMM_ALGO_STANDARD,
            0,
            GEMM_FLAGS_NONE,
        );
        self.lib.check("rocblas_gemm_strided_batched_ex3", st)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if bind(self.ordinal).is_ok() {
            let st = unsafe { (self.lib.destroy_handle)(self.raw) };
            if st != STATUS_SUCCESS {
                log::error!("rocm: rocblas_destroy_handle failed: {}", self.lib.status_text(st));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("4.2.4.b7a1f5c3"), Some((4, 2)));
        assert_eq!(parse_version("5.0.0-abc"), Some((5, 0)));
        assert_eq!(parse_version("unknown"), None);
    }

    #[test]
    fn fp8_availability_reasons() {
        assert_eq!(fp8_unavailable_reason("4.2.4.abc", true, "gfx942:sramecc+:xnack-"), None);
        assert_eq!(fp8_unavailable_reason("4.0.0", true, "gfx940"), None);
        let r = fp8_unavailable_reason("5.0.0.abc", false, "gfx942").unwrap();
        assert!(r.contains("5.x") && r.contains("removed FP8"), "{r}");
        // A 5.x library that still exported the symbol is refused too (FP8 kernels removed).
        assert!(fp8_unavailable_reason("5.1.0", true, "gfx942").unwrap().contains("removed FP8"));
        assert!(fp8_unavailable_reason("4.1.0", false, "gfx942").unwrap().contains("no rocblas_gemm_strided_batched_ex3"));
        let r = fp8_unavailable_reason("4.2.0", true, "gfx950").unwrap();
        assert!(r.starts_with("gfx950 has no rocBLAS FP8"), "{r}");
        assert!(fp8_unavailable_reason("4.2.0", true, "gfx90a").unwrap().contains("gfx90a"));
    }

    #[test]
    fn status_names() {
        assert_eq!(status_name(0), "rocblas_status_success (0)");
        assert_eq!(status_name(15), "rocblas_status_arch_mismatch (15)");
        assert_eq!(status_name(11), "rocblas_status_invalid_value (11)");
        assert_eq!(status_name(99), "rocblas_status 99");
        assert_eq!(status_name(-1), "rocblas_status -1");
    }
}
