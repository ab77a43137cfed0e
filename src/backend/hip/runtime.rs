//! A safe layer over the HIP runtime, in three layers as in cudarc: `sys` (raw entry points
//! with integer status codes), `result` (one function per call, each returning a typed
//! [`Error::Device`] naming the call and the code), and the safe types below: [`Stream`],
//! [`Event`], [`DeviceBuffer`], [`Module`], [`Function`] and the typed [`LaunchArgs`].
//!
//! HIP keeps a *current device per host thread*; every safe operation first binds its
//! device, so the types may be used from any thread (the backend is `Send + Sync`).
//! `Drop` impls never panic: a failed release is logged through `log`.

use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

use super::sys;
use crate::error::{Error, Result};

const BACKEND: &str = "rocm";

/// "hipErrorNoDevice (100): no ROCm-capable device is detected" for any code, including
/// codes newer than the bindings (the runtime names those itself, or calls them unknown).
pub fn status_text(status: sys::Status) -> String {
    // SAFETY: both functions take any integer and return a static NUL-terminated string
    // (or null, which we check).
    let (name, text) = unsafe { (sys::hipGetErrorName(status), sys::hipGetErrorString(status)) };
    let read = |p: *const c_char| if p.is_null() { None } else { Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()) };
    match (read(name), read(text)) {
        (Some(n), Some(t)) if n != t => format!("{n} ({status}): {t}"),
        (Some(n), _) => format!("{n} ({status})"),
        _ => format!("HIP status {status}"),
    }
}

/// The `result` layer: thin checked wrappers, one per runtime call.
pub mod result {
    use super::*;

    /// Maps a status to `Ok` or to `Error::Device { call, reason }`.
    pub fn check(call: &'static str, status: sys::Status) -> Result<()> {
        if status == sys::HIP_SUCCESS {
            Ok(())
        } else {
            Err(Error::Device { backend: BACKEND, call: call.into(), reason: status_text(status) })
        }
    }

    /// Device count; `Ok(0)` when the runtime reports hipErrorNoDevice, which is what a
    /// machine without an AMD GPU (or without the amdgpu driver) answers.
    pub fn device_count() -> Result<usize> {
        let mut n: c_int = 0;
        let st = unsafe { sys::hipGetDeviceCount(&mut n) };
        if st == sys::HIP_ERROR_NO_DEVICE {
            return Ok(0);
        }
        check("hipGetDeviceCount", st)?;
        Ok(n.max(0) as usize)
    }

    /// The raw status of `hipGetDeviceCount`, for reporting why no device is listed.
    pub fn device_count_status() -> (sys::Status, usize) {
        let mut n: c_int = 0;
        let st = unsafe { sys::hipGetDeviceCount(&mut n) };
        (st, n.max(0) as usize)
    }

    pub fn set_device(ordinal: usize) -> Result<()> {
        check("hipSetDevice", unsafe { sys::hipSetDevice(ordinal as c_int) })
    }

    pub fn attribute(ordinal: usize, attr: c_int, call: &'static str) -> Result<i32> {
        let mut v: c_int = 0;
        check(call, unsafe { sys::hipDeviceGetAttribute(&mut v, attr, ordinal as c_int) })?;
        Ok(v)
    }

    pub fn device_name(ordinal: usize) -> Result<String> {
        let mut buf = [0 as c_char; 256];
        check("hipDeviceGetName", unsafe { sys::hipDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, ordinal as c_int) })?;
        Ok(c_chars_to_string(&buf))
    }

    /// "0000:c1:00.0", for the sysfs fallback of the PCI device id.
    pub fn pci_bus_id(ordinal: usize) -> Result<String> {
        let mut buf = [0 as c_char; 64];
        check("hipDeviceGetPCIBusId", unsafe { sys::hipDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as c_int, ordinal as c_int) })?;
        Ok(c_chars_to_string(&buf))
    }

    /// The gcnArchName ("gfx942:sramecc+:xnack-"). No `hipDeviceGetAttribute` attribute
    /// serves: `hipDeviceAttributeGcnArchName` exists in the enum but the runtime answers it
    /// with hipErrorInvalidValue (the value is a string, the call returns an int), and the
    /// integer `hipDeviceAttributeGcnArch` is deprecated and removed in ROCm 6. So this reads
    /// the property struct through the pre-6.0 `hipGetDeviceProperties` symbol (which ROCm
    /// 6/7 export with the old layout), into a buffer with slack so that a runtime writing a
    /// larger struct cannot overrun it, and checks that the field reads as an arch name.
    pub fn gcn_arch_name(ordinal: usize) -> Result<String> {
        #[repr(C)]
        struct PropsWithSlack {
            props: sys::hipDeviceProp_t,
            slack: [u8; 4096],
        }
        let mut buf: Box<std::mem::MaybeUninit<PropsWithSlack>> = Box::new(std::mem::MaybeUninit::zeroed());
        check("hipGetDeviceProperties", unsafe { sys::hipGetDeviceProperties(buf.as_mut_ptr().cast(), ordinal as c_int) })?;
        // SAFETY: zero-initialised, then written by the runtime; every field is plain data.
        let buf = unsafe { buf.assume_init() };
        let arch = c_chars_to_string(&buf.props.gcnArchName);
        if crate::backend::hip::arch::is_gfx_name(base_arch(&arch)) {
            Ok(arch)
        } else {
            Err(Error::Device {
                backend: BACKEND,
                call: "hipGetDeviceProperties".into(),
                reason: format!("gcnArchName reads {arch:?}, not a gfx architecture (property struct layout mismatch?)"),
            })
        }
    }

    pub fn runtime_version() -> Result<i32> {
        let mut v: c_int = 0;
        check("hipRuntimeGetVersion", unsafe { sys::hipRuntimeGetVersion(&mut v) })?;
        Ok(v)
    }

    fn base_arch(full: &str) -> &str {
        full.split(':').next().unwrap_or(full)
    }
}

fn c_chars_to_string(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// Binds `ordinal` as the calling thread's current device.
pub fn bind(ordinal: usize) -> Result<()> {
    result::set_device(ordinal)
}

fn log_release(what: &str, call: &'static str, status: sys::Status) {
    if status != sys::HIP_SUCCESS {
        log::error!("rocm: {call} while releasing {what} failed: {}", status_text(status));
    }
}

/// An owned HIP stream.
pub struct Stream {
    raw: sys::hipStream_t,
    ordinal: usize,
}

// SAFETY: HIP streams may be used from any host thread once the device is bound, which
// every method does.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    pub fn new(ordinal: usize) -> Result<Self> {
        bind(ordinal)?;
        let mut raw = std::ptr::null_mut();
        result::check("hipStreamCreateWithFlags", unsafe { sys::hipStreamCreateWithFlags(&mut raw, sys::STREAM_NON_BLOCKING) })?;
        Ok(Stream { raw, ordinal })
    }
    /// A caller's stream in this type, for calls that take one. Never let it drop (wrap it in
    /// `ManuallyDrop`): dropping destroys the stream.
    pub fn borrowed(raw: sys::hipStream_t, ordinal: usize) -> Self {
        Stream { raw, ordinal }
    }
    pub fn raw(&self) -> sys::hipStream_t {
        self.raw
    }
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
    pub fn synchronize(&self) -> Result<()> {
        bind(self.ordinal)?;
        result::check("hipStreamSynchronize", unsafe { sys::hipStreamSynchronize(self.raw) })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if bind(self.ordinal).is_ok() {
            log_release("a stream", "hipStreamDestroy", unsafe { sys::hipStreamDestroy(self.raw) });
        }
    }
}

/// An owned HIP event, created with timing enabled.
pub struct Event {
    raw: sys::hipEvent_t,
    ordinal: usize,
}

// SAFETY: as for `Stream`.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    pub fn new(ordinal: usize) -> Result<Self> {
        bind(ordinal)?;
        let mut raw = std::ptr::null_mut();
        result::check("hipEventCreate", unsafe { sys::hipEventCreate(&mut raw) })?;
        Ok(Event { raw, ordinal })
    }
    pub fn record(&self, stream: &Stream) -> Result<()> {
        bind(self.ordinal)?;
        result::check("hipEventRecord", unsafe { sys::hipEventRecord(self.raw, stream.raw) })
    }
    pub fn synchronize(&self) -> Result<()> {
        bind(self.ordinal)?;
        result::check("hipEventSynchronize", unsafe { sys::hipEventSynchronize(self.raw) })
    }
    /// Milliseconds from `start` to `self` (both recorded, `self` completed).
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        let mut ms = 0f32;
        result::check("hipEventElapsedTime", unsafe { sys::hipEventElapsedTime(&mut ms, start.raw, self.raw) })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if bind(self.ordinal).is_ok() {
            log_release("an event", "hipEventDestroy", unsafe { sys::hipEventDestroy(self.raw) });
        }
    }
}

/// A device address of `T` elements, passed to kernels by value. Only [`DeviceBuffer`]
/// makes these, so a host address cannot be passed where a device one is expected.
#[repr(transparent)]
#[derive(Debug)]
pub struct DevicePtr<T> {
    raw: *mut c_void,
    _t: PhantomData<*mut T>,
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}

impl<T> DevicePtr<T> {
    /// A null device address: for argument-list checks only; a launch with it faults.
    pub fn null() -> Self {
        DevicePtr { raw: std::ptr::null_mut(), _t: PhantomData }
    }
    /// The address `elems` elements further on (for rocBLAS batch bases and chunk offsets).
    pub fn offset(self, elems: usize) -> Self {
        DevicePtr { raw: (self.raw as *mut u8).wrapping_add(elems * std::mem::size_of::<T>()).cast(), _t: PhantomData }
    }
    pub fn as_raw(self) -> *mut c_void {
        self.raw
    }
    /// The device address `addr` (checked by the caller to be memory of the launch's device).
    pub fn from_addr(addr: u64) -> Self {
        DevicePtr { raw: addr as *mut c_void, _t: PhantomData }
    }
}

/// Device memory for `len` values of `T`, freed on drop.
pub struct DeviceBuffer<T: Copy> {
    raw: *mut c_void,
    len: usize,
    ordinal: usize,
    _t: PhantomData<T>,
}

// SAFETY: the buffer is only plain device memory; access goes through the runtime.
unsafe impl<T: Copy + Send> Send for DeviceBuffer<T> {}
unsafe impl<T: Copy + Sync> Sync for DeviceBuffer<T> {}

impl<T: Copy> DeviceBuffer<T> {
    /// Uninitialised device memory (at least one byte, so the address is never null).
    pub fn alloc(ordinal: usize, len: usize) -> Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::invalid("hip alloc", format!("{len} elements overflow usize")))?;
        bind(ordinal)?;
        let mut raw = std::ptr::null_mut();
        result::check("hipMalloc", unsafe { sys::hipMalloc(&mut raw, bytes.max(1)) })
            .map_err(|e| annotate(e, format!("allocating {bytes} bytes")))?;
        Ok(DeviceBuffer { raw, len, ordinal, _t: PhantomData })
    }

    /// Allocates and copies `host` in (ordered on `stream`; synchronise before reading back
    /// on another stream).
    pub fn from_host(stream: &Stream, host: &[T]) -> Result<Self> {
        let mut buf = Self::alloc(stream.ordinal, host.len())?;
        buf.copy_from_host(stream, host)?;
        Ok(buf)
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    pub fn ptr(&self) -> DevicePtr<T> {
        DevicePtr { raw: self.raw, _t: PhantomData }
    }

    /// Copies `host` to the start of the buffer and waits for the copy (the host slice is
    /// only borrowed for the call).
    pub fn copy_from_host(&mut self, stream: &Stream, host: &[T]) -> Result<()> {
        if host.len() > self.len {
            return Err(Error::invalid("hip copy", format!("{} host elements into a buffer of {}", host.len(), self.len)));
        }
        bind(self.ordinal)?;
        let bytes = std::mem::size_of_val(host);
        result::check("hipMemcpyAsync(HtoD)", unsafe {
            sys::hipMemcpyAsync(self.raw, host.as_ptr().cast(), bytes, sys::MEMCPY_HOST_TO_DEVICE, stream.raw)
        })?;
        stream.synchronize()
    }

    /// Copies the first `host.len()` elements out and waits for the copy.
    pub fn copy_to_host(&self, stream: &Stream, host: &mut [T]) -> Result<()> {
        if host.len() > self.len {
            return Err(Error::invalid("hip copy", format!("{} host elements from a buffer of {}", host.len(), self.len)));
        }
        bind(self.ordinal)?;
        let bytes = std::mem::size_of_val(host);
        result::check("hipMemcpyAsync(DtoH)", unsafe {
            sys::hipMemcpyAsync(host.as_mut_ptr().cast(), self.raw, bytes, sys::MEMCPY_DEVICE_TO_HOST, stream.raw)
        })?;
        stream.synchronize()
    }

    pub fn zero(&mut self, stream: &Stream) -> Result<()> {
        bind(self.ordinal)?;
        result::check("hipMemsetAsync", unsafe { sys::hipMemsetAsync(self.raw, 0, self.bytes(), stream.raw) })
    }
}

impl<T: Copy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if bind(self.ordinal).is_ok() {
            log_release("device memory", "hipFree", unsafe { sys::hipFree(self.raw) });
        }
    }
}

fn annotate(e: Error, what: String) -> Error {
    match e {
        Error::Device { backend, call, reason } => Error::Device { backend, call, reason: format!("{reason} ({what})") },
        other => other,
    }
}

/// A loaded code object. Keeps its image alive for as long as the module lives.
pub struct Module {
    raw: sys::hipModule_t,
    ordinal: usize,
    label: String,
    _image: Cow<'static, [u8]>,
}

// SAFETY: module handles are usable from any thread once the device is bound.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    /// Loads a code object (raw AMDGPU ELF or clang offload bundle) on device `ordinal`.
    /// Images that are neither are refused before the runtime sees them.
    pub fn load(ordinal: usize, label: impl Into<String>, image: Cow<'static, [u8]>) -> Result<Arc<Self>> {
        let label = label.into();
        super::arch::check_code_object_image(&image).map_err(|why| Error::invalid("hip module", format!("{label}: {why}")))?;
        bind(ordinal)?;
        let mut raw = std::ptr::null_mut();
        result::check("hipModuleLoadData", unsafe { sys::hipModuleLoadData(&mut raw, image.as_ptr().cast()) })
            .map_err(|e| annotate(e, format!("code object {label}, {} bytes", image.len())))?;
        Ok(Arc::new(Module { raw, ordinal, label, _image: image }))
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// Looks up an `extern "C"` kernel by symbol name.
    pub fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        let cname = CString::new(name).map_err(|_| Error::invalid("hip module", format!("kernel name {name:?} contains NUL")))?;
        bind(self.ordinal)?;
        let mut raw = std::ptr::null_mut();
        result::check("hipModuleGetFunction", unsafe { sys::hipModuleGetFunction(&mut raw, self.raw, cname.as_ptr()) })
            .map_err(|e| annotate(e, format!("kernel {name} in {}", self.label)))?;
        Ok(Function { raw, module: Arc::clone(self), name: name.to_string() })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if bind(self.ordinal).is_ok() {
            log_release("a module", "hipModuleUnload", unsafe { sys::hipModuleUnload(self.raw) });
        }
    }
}

/// A kernel of a loaded module; holds the module alive.
pub struct Function {
    raw: sys::hipFunction_t,
    module: Arc<Module>,
    name: String,
}

// SAFETY: as for `Module`.
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

/// Grid and workgroup sizes of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch of `grid_x` workgroups of `threads`.
    pub fn linear(grid_x: u32, threads: u32) -> Self {
        LaunchConfig { grid: (grid_x, 1, 1), block: (threads, 1, 1), shared_bytes: 0 }
    }
}

/// Values a kernel parameter may have: plain scalars and device pointers. Not implemented
/// for references or host pointers.
///
/// # Safety
/// Implementors must be `repr(C)`-compatible with the C parameter type they stand for,
/// named by `C_TYPE` ("pointer" for any `T*`).
pub unsafe trait KernelArg: Copy {
    const C_TYPE: &'static str;
}
unsafe impl KernelArg for i32 {
    const C_TYPE: &'static str = "int";
}
unsafe impl KernelArg for u32 {
    const C_TYPE: &'static str = "unsigned int";
}
unsafe impl KernelArg for i64 {
    const C_TYPE: &'static str = "long long";
}
unsafe impl KernelArg for u64 {
    const C_TYPE: &'static str = "unsigned long long";
}
unsafe impl KernelArg for f32 {
    const C_TYPE: &'static str = "float";
}
unsafe impl<T> KernelArg for DevicePtr<T> {
    const C_TYPE: &'static str = "pointer";
}

/// The kernel parameter array: one pointer *to each argument value*, in order. The borrow
/// `'a` keeps every value alive until the launch has read it.
#[derive(Default)]
pub struct LaunchArgs<'a> {
    ptrs: Vec<*mut c_void>,
    c_types: Vec<&'static str>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> LaunchArgs<'a> {
    pub fn new() -> Self {
        LaunchArgs { ptrs: Vec::new(), c_types: Vec::new(), _borrow: PhantomData }
    }
    pub fn arg<T: KernelArg>(&mut self, value: &'a T) -> &mut Self {
        self.ptrs.push(value as *const T as *mut c_void);
        self.c_types.push(T::C_TYPE);
        self
    }
    /// The C types of the arguments, in order (checked against the kernels' signatures).
    pub fn c_types(&self) -> &[&'static str] {
        &self.c_types
    }
    pub fn len(&self) -> usize {
        self.ptrs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ptrs.is_empty()
    }
}

impl Function {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// Enqueues the kernel on `stream`.
    ///
    /// # Safety
    /// The caller guarantees that
    /// - `args` lists exactly the kernel's parameters, in order, each with the C type of the
    ///   parameter (`i32` for `int`, `i64` for `long long`, `DevicePtr<T>` for `T*`);
    /// - every device pointer addresses a live allocation of this device large enough for
    ///   every element the kernel reads or writes for these sizes and this `cfg`;
    /// - those allocations outlive the kernel's execution (synchronise `stream` before
    ///   dropping them) and no other work writes them concurrently;
    /// - `cfg` is what the kernel was written for (its block size, static LDS only, a
    ///   non-empty grid).
    pub unsafe fn launch(&self, stream: &Stream, cfg: LaunchConfig, args: &mut LaunchArgs<'_>) -> Result<()> {
        self.launch_raw(stream.raw, stream.ordinal, cfg, args)
    }

    /// [`launch`](Self::launch) on a raw stream of device `ordinal` (a caller's `hipStream_t`).
    ///
    /// # Safety
    /// As `launch`, and `stream` must be a live stream of that device (or null).
    pub unsafe fn launch_raw(&self, stream: sys::hipStream_t, ordinal: usize, cfg: LaunchConfig, args: &mut LaunchArgs<'_>) -> Result<()> {
        if [cfg.grid.0, cfg.grid.1, cfg.grid.2, cfg.block.0, cfg.block.1, cfg.block.2].contains(&0) {
            return Err(Error::invalid("hip launch", format!("{}: empty grid {:?} / block {:?}", self.name, cfg.grid, cfg.block)));
        }
        bind(ordinal)?;
        let params = if args.ptrs.is_empty() { std::ptr::null_mut() } else { args.ptrs.as_mut_ptr() };
        let st = sys::hipModuleLaunchKernel(
            self.raw,
            cfg.grid.0,
            cfg.grid.1,
            cfg.grid.2,
            cfg.block.0,
            cfg.block.1,
            cfg.block.2,
            cfg.shared_bytes,
            stream,
            params,
            std::ptr::null_mut(),
        );
        result::check("hipModuleLaunchKernel", st).map_err(|e| annotate(e, format!("kernel {}, grid {:?}, block {:?}", self.name, cfg.grid, cfg.block)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_args_are_pointers_to_the_values_in_order() {
        let (a, m, stride, scale) = (DevicePtr::<f32> { raw: 0x1000 as *mut c_void, _t: PhantomData }, 17i32, 1i64 << 40, 0.5f32);
        let mut args = LaunchArgs::new();
        args.arg(&a).arg(&m).arg(&stride).arg(&scale);
        assert_eq!(args.len(), 4);
        assert_eq!(args.c_types(), ["pointer", "int", "long long", "float"]);
        // What hipModuleLaunchKernel reads: *(T*)params[i] for the i-th parameter.
        unsafe {
            assert_eq!(*(args.ptrs[0] as *const *mut c_void), 0x1000 as *mut c_void);
            assert_eq!(*(args.ptrs[1] as *const i32), 17);
            assert_eq!(*(args.ptrs[2] as *const i64), 1 << 40);
            assert_eq!(*(args.ptrs[3] as *const f32), 0.5);
        }
        // A device pointer argument has the size of a C pointer.
        assert_eq!(std::mem::size_of::<DevicePtr<u8>>(), std::mem::size_of::<*mut c_void>());
    }

    #[test]
    fn device_pointer_offsets_count_elements() {
        let base = DevicePtr::<f32> { raw: 0x1000 as *mut c_void, _t: PhantomData };
        assert_eq!(base.offset(3).as_raw() as usize, 0x1000 + 12);
        let bytes = DevicePtr::<u8> { raw: 0x1000 as *mut c_void, _t: PhantomData };
        assert_eq!(bytes.offset(128).as_raw() as usize, 0x1000 + 128);
    }

    #[test]
    fn empty_launches_are_refused_before_the_runtime() {
        // A function whose handles are null: the check must answer before any HIP call.
        let module = Arc::new(Module { raw: std::ptr::null_mut(), ordinal: 0, label: "none".into(), _image: Cow::Borrowed(&[]) });
        let f = Function { raw: std::ptr::null_mut(), module, name: "k".into() };
        let stream = Stream { raw: std::ptr::null_mut(), ordinal: 0 };
        for cfg in [LaunchConfig::linear(0, 256), LaunchConfig::linear(4, 0), LaunchConfig { grid: (1, 0, 1), block: (64, 1, 1), shared_bytes: 0 }] {
            let err = unsafe { f.launch(&stream, cfg, &mut LaunchArgs::new()) }.unwrap_err();
            assert!(matches!(&err, Error::InvalidArgument { what, .. } if what.contains("empty grid")), "{err}");
        }
        // Null handles are not the runtime's: never release them.
        std::mem::forget(stream);
        std::mem::forget(f);
    }

    #[test]
    fn c_strings_stop_at_nul() {
        let mut buf = [0 as c_char; 16];
        for (i, b) in b"gfx942:xnack-\0junk".iter().take(16).enumerate() {
            buf[i] = *b as c_char;
        }
        assert_eq!(c_chars_to_string(&buf), "gfx942:xnack-");
    }
}
