//! One error type for the crate. Variants carry the operation and the shapes involved so
//! that a message alone tells the user what to fix.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A tensor or scale has the wrong length or shape for the operation.
    #[error("{op}: {what}")]
    Shape { op: &'static str, what: String },

    /// An argument outside what the operation supports (dtype, group size, flavour...).
    #[error("{op}: invalid argument: {what}")]
    InvalidArgument { op: &'static str, what: String },

    /// Non-finite values where finite ones are required (NaN scales, NaN inputs to quantize).
    #[error("{op}: non-finite value: {what}")]
    NonFinite { op: &'static str, what: String },

    /// A tuned-config file that could not be used. Callers of the config library never see
    /// this (a bad file counts as missing); `config check` reports it.
    #[error("config file {path}: {reason}")]
    Config { path: PathBuf, reason: String },

    /// The requested backend was not compiled in, or has no usable device.
    #[error("backend {backend} unavailable: {reason}")]
    BackendUnavailable { backend: &'static str, reason: String },

    /// A GPU runtime or library call failed.
    #[error("{backend}: {call} failed: {reason}")]
    Device { backend: &'static str, call: String, reason: String },

    /// A path (kernel config, vendor library) cannot serve this problem.
    #[error("{path} cannot run this problem: {reason}")]
    Unsupported { path: String, reason: String },

    /// A buffer, view or stream of another device than the one the operation runs on.
    #[error("{op}: {what} is on {found}, expected {expected}")]
    WrongDevice { op: &'static str, what: String, expected: String, found: String },

    /// A device address without the alignment the kernels need.
    #[error("{op}: {what} at {addr:#x} is not aligned to {align} bytes")]
    Misaligned { op: &'static str, what: String, addr: u64, align: usize },

    /// The device (or host) could not provide the memory asked for.
    #[error("{backend}: out of memory allocating {bytes} bytes")]
    OutOfMemory { backend: &'static str, bytes: usize },

    #[error("{context}: {source}")]
    Io { context: String, #[source] source: std::io::Error },
}

impl Error {
    pub fn shape(op: &'static str, what: impl Into<String>) -> Self {
        Error::Shape { op, what: what.into() }
    }
    pub fn invalid(op: &'static str, what: impl Into<String>) -> Self {
        Error::InvalidArgument { op, what: what.into() }
    }
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }
}
