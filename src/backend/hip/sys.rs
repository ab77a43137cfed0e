//! The raw HIP runtime entry points this crate calls, declared here rather than taken from
//! `hip-runtime-sys`: its functions return the Rust enum `hipError_t` generated from HIP 5.4,
//! and a status code a newer runtime adds (ROCm 6/7) arriving through that enum would be
//! undefined behaviour. Declared with `i32` returns, every status is read as a plain integer.
//! Handle types and the property struct still come from `hip-runtime-sys` (plain pointers
//! and a `repr(C)` struct, no enums involved).

use std::os::raw::{c_char, c_int, c_uint, c_void};

pub use hip_runtime_sys::{hipDeviceProp_t, hipEvent_t, hipFunction_t, hipModule_t, hipStream_t};

/// A HIP status code, never converted to `hipError_t`.
pub type Status = i32;

pub const HIP_SUCCESS: Status = 0;
pub const HIP_ERROR_NO_DEVICE: Status = 100;

/// `hipDeviceAttribute_t` values. Stable since HIP 5.0 and unchanged in ROCm 6 and 7.
pub const ATTR_MULTIPROCESSOR_COUNT: c_int = 63;
pub const ATTR_PCI_DEVICE_ID: c_int = 68;
pub const ATTR_WARP_SIZE: c_int = 87;

/// `hipMemcpyKind`.
pub const MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;

/// `hipStreamNonBlocking`: no implicit synchronisation with the null stream.
pub const STREAM_NON_BLOCKING: c_uint = 1;

#[link(name = "amdhip64")]
extern "C" {
    pub fn hipGetErrorName(status: Status) -> *const c_char;
    pub fn hipGetErrorString(status: Status) -> *const c_char;
    pub fn hipRuntimeGetVersion(version: *mut c_int) -> Status;
    pub fn hipDriverGetVersion(version: *mut c_int) -> Status;

    pub fn hipGetDeviceCount(count: *mut c_int) -> Status;
    pub fn hipSetDevice(device: c_int) -> Status;
    pub fn hipDeviceGetAttribute(value: *mut c_int, attr: c_int, device: c_int) -> Status;
    pub fn hipDeviceGetName(name: *mut c_char, len: c_int, device: c_int) -> Status;
    pub fn hipDeviceGetPCIBusId(bus_id: *mut c_char, len: c_int, device: c_int) -> Status;
    /// The pre-6.0 symbol; ROCm 6/7 keep exporting it with the 5.x struct layout (their
    /// headers map the name to `hipGetDevicePropertiesR0600`, which we do not call).
    pub fn hipGetDeviceProperties(props: *mut hipDeviceProp_t, device: c_int) -> Status;
    pub fn hipDeviceSynchronize() -> Status;

    pub fn hipStreamCreateWithFlags(stream: *mut hipStream_t, flags: c_uint) -> Status;
    pub fn hipStreamDestroy(stream: hipStream_t) -> Status;
    pub fn hipStreamSynchronize(stream: hipStream_t) -> Status;

    pub fn hipEventCreate(event: *mut hipEvent_t) -> Status;
    pub fn hipEventDestroy(event: hipEvent_t) -> Status;
    pub fn hipEventRecord(event: hipEvent_t, stream: hipStream_t) -> Status;
    pub fn hipEventSynchronize(event: hipEvent_t) -> Status;
    pub fn hipEventElapsedTime(ms: *mut f32, start: hipEvent_t, stop: hipEvent_t) -> Status;

    pub fn hipMalloc(ptr: *mut *mut c_void, bytes: usize) -> Status;
    pub fn hipFree(ptr: *mut c_void) -> Status;
    pub fn hipMemcpyAsync(dst: *mut c_void, src: *const c_void, bytes: usize, kind: c_int, stream: hipStream_t) -> Status;
    pub fn hipMemsetAsync(dst: *mut c_void, value: c_int, bytes: usize, stream: hipStream_t) -> Status;

    pub fn hipModuleLoadData(module: *mut hipModule_t, image: *const c_void) -> Status;
    pub fn hipModuleUnload(module: hipModule_t) -> Status;
    pub fn hipModuleGetFunction(function: *mut hipFunction_t, module: hipModule_t, name: *const c_char) -> Status;
    #[allow(clippy::too_many_arguments)]
    pub fn hipModuleLaunchKernel(
        f: hipFunction_t,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: hipStream_t,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> Status;
}
