//! Status codes, the thread-local last-error message, and the guard every exported function
//! runs its body in, so that no panic unwinds into C.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use blockfp8::Error;

pub const BLOCKFP8_OK: i32 = 0;
pub const BLOCKFP8_ERR_INVALID_ARGUMENT: i32 = 1;
pub const BLOCKFP8_ERR_SHAPE: i32 = 2;
pub const BLOCKFP8_ERR_NON_FINITE: i32 = 3;
pub const BLOCKFP8_ERR_UNSUPPORTED: i32 = 4;
pub const BLOCKFP8_ERR_WRONG_DEVICE: i32 = 5;
pub const BLOCKFP8_ERR_MISALIGNED: i32 = 6;
pub const BLOCKFP8_ERR_OUT_OF_MEMORY: i32 = 7;
pub const BLOCKFP8_ERR_DEVICE: i32 = 8;
pub const BLOCKFP8_ERR_BACKEND_UNAVAILABLE: i32 = 9;
pub const BLOCKFP8_ERR_NULL_POINTER: i32 = 10;
pub const BLOCKFP8_ERR_PANIC: i32 = 11;
pub const BLOCKFP8_ERR_OTHER: i32 = 12;

/// What the exported functions fail with: a status code and the message for `blockfp8_last_error`.
#[derive(Debug)]
pub struct Failure {
    pub status: i32,
    pub message: String,
}

impl Failure {
    pub fn new(status: i32, message: impl Into<String>) -> Self {
        Failure { status, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(BLOCKFP8_ERR_INVALID_ARGUMENT, message)
    }
    pub fn null(what: &str) -> Self {
        Self::new(BLOCKFP8_ERR_NULL_POINTER, format!("{what} is a null pointer"))
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let status = match &e {
            Error::Shape { .. } => BLOCKFP8_ERR_SHAPE,
            Error::InvalidArgument { .. } => BLOCKFP8_ERR_INVALID_ARGUMENT,
            Error::NonFinite { .. } => BLOCKFP8_ERR_NON_FINITE,
            Error::Unsupported { .. } => BLOCKFP8_ERR_UNSUPPORTED,
            Error::WrongDevice { .. } => BLOCKFP8_ERR_WRONG_DEVICE,
            Error::Misaligned { .. } => BLOCKFP8_ERR_MISALIGNED,
            Error::OutOfMemory { .. } => BLOCKFP8_ERR_OUT_OF_MEMORY,
            Error::Device { .. } => BLOCKFP8_ERR_DEVICE,
            Error::BackendUnavailable { .. } => BLOCKFP8_ERR_BACKEND_UNAVAILABLE,
            Error::Config { .. } | Error::Io { .. } => BLOCKFP8_ERR_OTHER,
        };
        Failure { status, message: e.to_string() }
    }
}

pub type FfiResult<T = ()> = Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // An interior NUL would truncate the C string; replace it rather than lose the message.
    let c = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // try_with: during thread teardown the slot may be gone; never panic here (outside the guard).
    let _ = LAST_ERROR.try_with(|l| {
        if let Ok(mut slot) = l.try_borrow_mut() {
            *slot = c;
        }
    });
}

/// Runs `body`, turning its error or panic into a status code and the thread's last error.
pub fn guard(op: &str, body: impl FnOnce() -> FfiResult) -> i32 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => BLOCKFP8_OK,
        Ok(Err(f)) => {
            log::debug!("{op}: {}", f.message);
            set_last_error(&f.message);
            f.status
        }
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "unknown panic".into());
            let message = format!("{op}: internal error (panic): {what}");
            log::error!("{message}");
            set_last_error(&message);
            BLOCKFP8_ERR_PANIC
        }
    }
}

/// The message of the last failed call on this thread ("" if none). Valid until the next
/// failing call on this thread.
#[no_mangle]
pub extern "C" fn blockfp8_last_error() -> *const c_char {
    LAST_ERROR.try_with(|l| l.try_borrow().map(|s| s.as_ptr()).ok()).ok().flatten().unwrap_or(c"".as_ptr())
}

/// A static name for a status code ("BLOCKFP8_ERR_SHAPE"), "BLOCKFP8_UNKNOWN_STATUS" for others.
#[no_mangle]
pub extern "C" fn blockfp8_status_name(status: i32) -> *const c_char {
    let s: &'static [u8] = match status {
        BLOCKFP8_OK => b"BLOCKFP8_OK\0",
        BLOCKFP8_ERR_INVALID_ARGUMENT => b"BLOCKFP8_ERR_INVALID_ARGUMENT\0",
        BLOCKFP8_ERR_SHAPE => b"BLOCKFP8_ERR_SHAPE\0",
        BLOCKFP8_ERR_NON_FINITE => b"BLOCKFP8_ERR_NON_FINITE\0",
        BLOCKFP8_ERR_UNSUPPORTED => b"BLOCKFP8_ERR_UNSUPPORTED\0",
        BLOCKFP8_ERR_WRONG_DEVICE => b"BLOCKFP8_ERR_WRONG_DEVICE\0",
        BLOCKFP8_ERR_MISALIGNED => b"BLOCKFP8_ERR_MISALIGNED\0",
        BLOCKFP8_ERR_OUT_OF_MEMORY => b"BLOCKFP8_ERR_OUT_OF_MEMORY\0",
        BLOCKFP8_ERR_DEVICE => b"BLOCKFP8_ERR_DEVICE\0",
        BLOCKFP8_ERR_BACKEND_UNAVAILABLE => b"BLOCKFP8_ERR_BACKEND_UNAVAILABLE\0",
        BLOCKFP8_ERR_NULL_POINTER => b"BLOCKFP8_ERR_NULL_POINTER\0",
        BLOCKFP8_ERR_PANIC => b"BLOCKFP8_ERR_PANIC\0",
        BLOCKFP8_ERR_OTHER => b"BLOCKFP8_ERR_OTHER\0",
        _ => b"BLOCKFP8_UNKNOWN_STATUS\0",
    };
    s.as_ptr() as *const c_char
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: the pointer is the thread's live CString.
        unsafe { CStr::from_ptr(blockfp8_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard("test op", || panic!("boom {}", 7));
        assert_eq!(status, BLOCKFP8_ERR_PANIC);
        assert!(last().contains("test op") && last().contains("boom 7"), "{}", last());
    }

    #[test]
    fn crate_errors_keep_their_kind_and_text() {
        let status = guard("op", || Err(Error::shape("gemm", "A is too short").into()));
        assert_eq!(status, BLOCKFP8_ERR_SHAPE);
        assert_eq!(last(), "gemm: A is too short");
        assert_eq!(guard("op", || Ok(())), BLOCKFP8_OK);
        // SAFETY: static NUL-terminated names.
        assert_eq!(unsafe { CStr::from_ptr(blockfp8_status_name(BLOCKFP8_ERR_SHAPE)) }.to_str().unwrap(), "BLOCKFP8_ERR_SHAPE");
    }
}
