//! The C ABI of `blockfp8` (header: `include/blockfp8.h`). Every exported function checks its
//! arguments, runs inside [`error::guard`] (no panic crosses into C) and reports failures as a
//! status code plus a thread-local message (`blockfp8_last_error`).
//!
//! Device pointers are plain integers/pointers of the context's device (host pointers on the
//! CPU backend); streams are `CUstream` / `hipStream_t` values (0 = the legacy default stream),
//! never destroyed here.

use std::ffi::c_char;

pub mod codes;
pub mod context;
pub mod error;
pub mod gemm;
pub mod quant;
pub mod weight;

use error::{FfiResult, Failure};

/// Bumped on any incompatible change to the header; `BLOCKFP8_ABI_VERSION` there must match.
pub const ABI_VERSION: u32 = 1;

/// The ABI version this library implements (compare with the header's `BLOCKFP8_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn blockfp8_abi_version() -> u32 {
    ABI_VERSION
}

/// The crate version and the backends compiled in, e.g. "0.1.0 (cpu,cuda)".
#[no_mangle]
pub extern "C" fn blockfp8_version() -> *const c_char {
    static VERSION: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| {
            let backends: Vec<&str> = [blockfp8::BackendKind::Cpu, blockfp8::BackendKind::Cuda, blockfp8::BackendKind::Rocm].into_iter().filter(|b| b.compiled()).map(|b| b.name()).collect();
            std::ffi::CString::new(format!("{} ({})", env!("CARGO_PKG_VERSION"), backends.join(","))).unwrap_or_default()
        })
        .as_ptr()
}

/// 1 if `backend` (0 = cpu, 1 = cuda, 2 = rocm) is compiled into this library, else 0.
#[no_mangle]
pub extern "C" fn blockfp8_backend_compiled(backend: i32) -> i32 {
    codes::backend(backend).map(|b| b.compiled() as i32).unwrap_or(0)
}

/// Frees a handle made by `Box::into_raw` (null is ignored). A panic in a Drop must not unwind
/// into C, and there is nothing to report it to, so it is caught and dropped.
///
/// # Safety
/// `p` null or a live handle of this type, not used afterwards.
pub(crate) unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(Box::from_raw(p))));
    }
}

/// Writes `s` NUL-terminated into `buf` (at most `len` bytes, truncated) and its full length
/// plus one into `needed`.
///
/// # Safety
/// `buf` null (with any `len`) or writable for `len` bytes; `needed` null or writable.
pub(crate) unsafe fn write_c_str(s: &str, buf: *mut c_char, len: usize, needed: *mut usize) -> FfiResult {
    if let Some(n) = needed.as_mut() {
        *n = s.len() + 1;
    }
    if buf.is_null() {
        return if len == 0 { Ok(()) } else { Err(Failure::null("buf")) };
    }
    if len > 0 {
        let take = s.len().min(len - 1);
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf as *mut u8, take);
        *buf.add(take) = 0;
    }
    Ok(())
}
