//! Thin layer over cudarc's driver API: one context and stream per device, embedded cubins
//! loaded as modules (kept alive by their functions), device buffers, raw launches and
//! events. Every CUDA failure becomes `Error::Device { backend: "cuda", call, reason }`.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};

use crate::error::{Error, Result};

pub(crate) const BACKEND: &str = "cuda";

pub(crate) fn driver_err(call: &str, e: result::DriverError) -> Error {
    let name = e.error_name().map(|c| c.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e.error_string().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
    Error::Device { backend: BACKEND, call: call.to_string(), reason: format!("{name}: {text}") }
}

/// Shorthand: `.dev("cuLaunchKernel")?` on a driver result.
pub(crate) trait DriverResultExt<T> {
    fn dev(self, call: &str) -> Result<T>;
}
impl<T> DriverResultExt<T> for std::result::Result<T, result::DriverError> {
    fn dev(self, call: &str) -> Result<T> {
        self.map_err(|e| driver_err(call, e))
    }
}

/// Whether libcuda can be loaded at all (no driver: cudarc would panic on first use).
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

/// A loaded module; unloaded on drop (after every function holding it is gone).
pub(crate) struct Module {
    ctx: Arc<CudaContext>,
    handle: sys::CUmodule,
}
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        // Errors on unload are recorded by nobody on purpose: Drop must not panic.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the handle came from cuModuleLoadData and is unloaded once.
        let _ = unsafe { result::module::unload(self.handle) };
    }
}

/// A kernel entry point; holds its module alive.
#[derive(Clone)]
pub(crate) struct Function {
    _module: Arc<Module>,
    handle: sys::CUfunction,
    pub name: &'static str,
    /// CTAs per SM, asked once (a kernel's block size and shared memory never change).
    blocks_per_sm: Arc<std::sync::OnceLock<u32>>,
    max_clusters: Arc<std::sync::OnceLock<u32>>,
}
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

/// One device: context, its stream, and the modules loaded so far (by module name).
pub(crate) struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    modules: Mutex<HashMap<&'static str, Arc<Module>>>,
    functions: Mutex<HashMap<&'static str, Function>>,
}

impl Gpu {
    pub fn open(ordinal: usize) -> Result<Self> {
        let ctx = CudaContext::new(ordinal).dev("cuCtxCreate (primary context)")?;
        // Every buffer of this backend lives and is used on one stream, so cudarc's
        // cross-stream event tracking has nothing to order; off, launches record no events
        // (which CUDA graph capture would refuse). Set before the first allocation.
        // SAFETY: only this backend's stream ever touches its buffers.
        unsafe { ctx.disable_event_tracking() };
        // A stream of our own, non-blocking: it neither waits for nor holds up a caller's
        // work on the legacy default stream, and CUDA can capture it into a graph.
        let stream = ctx.new_stream().dev("cuStreamCreate")?;
        Ok(Gpu { ctx, stream, modules: Mutex::new(HashMap::new()), functions: Mutex::new(HashMap::new()) })
    }

    /// Loads `image` once under `name`.
    fn module(&self, name: &'static str, image: &'static [u8]) -> Result<Arc<Module>> {
        let mut mods = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = mods.get(name) {
            return Ok(m.clone());
        }
        self.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        // SAFETY: `image` is a complete cubin embedded at build time.
        let handle = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }.dev(&format!("cuModuleLoadData({name})"))?;
        let m = Arc::new(Module { ctx: self.ctx.clone(), handle });
        mods.insert(name, m.clone());
        Ok(m)
    }

    /// The function `symbol` of module `name` (loaded from `image` on first use); raises the
    /// dynamic shared-memory limit to `smem_bytes` when above the 48 KiB default.
    pub fn function(&self, name: &'static str, image: &'static [u8], symbol: &'static str, smem_bytes: u32) -> Result<Function> {
        if let Some(f) = self.functions.lock().unwrap_or_else(|e| e.into_inner()).get(symbol) {
            return Ok(f.clone());
        }
        let module = self.module(name, image)?;
        let cname = CString::new(symbol).expect("kernel symbols have no NUL");
        // SAFETY: the module is loaded and alive (held by `module`).
        let handle = unsafe { result::module::get_function(module.handle, cname) }.dev(&format!("cuModuleGetFunction({symbol})"))?;
        if smem_bytes > 48 * 1024 {
            // SAFETY: valid function handle; attribute value in range for the device (checked at build).
            unsafe {
                result::function::set_function_attribute(
                    handle,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    smem_bytes as i32,
                )
            }
            .dev(&format!("cuFuncSetAttribute({symbol}, MAX_DYNAMIC_SHARED_SIZE_BYTES={smem_bytes})"))?;
        }
        let f = Function { _module: module, handle, name: symbol, blocks_per_sm: Default::default(), max_clusters: Default::default() };
        self.functions.lock().unwrap_or_else(|e| e.into_inner()).insert(symbol, f.clone());
        Ok(f)
    }

    /// How many CTAs of `f` fit on one SM at once with this block size and shared memory
    /// (the kernel's fixed launch shape; cached after the first call, since launches ask).
    pub fn blocks_per_sm(&self, f: &Function, threads: u32, smem_bytes: u32) -> Result<u32> {
        if let Some(&n) = f.blocks_per_sm.get() {
            return Ok(n);
        }
        let mut n: std::ffi::c_int = 0;
        // SAFETY: valid function handle; `n` is a writable int.
        unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f.handle, threads as i32, smem_bytes as usize) }
            .result()
            .dev(&format!("cuOccupancyMaxActiveBlocksPerMultiprocessor({})", f.name))?;
        let n = n.max(0) as u32;
        let _ = f.blocks_per_sm.set(n);
        Ok(n)
    }

    /// How many clusters of `f` (cluster shape fixed at compile time) can be resident at once:
    /// not SMs / cluster size, since a cluster must fit in one GPC.
    pub fn max_active_clusters(&self, f: &Function, cluster: u32, threads: u32, smem_bytes: u32) -> Result<u32> {
        if let Some(&n) = f.max_clusters.get() {
            return Ok(n);
        }
        // The grid must be a whole number of clusters, or the query fails (INVALID_CLUSTER_SIZE).
        let config = sys::CUlaunchConfig {
            gridDimX: cluster,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: smem_bytes,
            hStream: std::ptr::null_mut(),
            attrs: std::ptr::null_mut(),
            numAttrs: 0,
        };
        let mut n: std::ffi::c_int = 0;
        // SAFETY: `config` is a complete launch configuration without attributes (the kernel
        // declares its cluster shape); `n` is writable.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, f.handle, &config) }.result().dev(&format!("cuOccupancyMaxActiveClusters({})", f.name))?;
        let n = n.max(0) as u32;
        log::debug!("{}: {n} clusters of {cluster} resident at once", f.name);
        let _ = f.max_clusters.set(n);
        Ok(n)
    }

    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        self.stream.clone_htod(host).dev("cuMemcpyHtoD")
    }
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, n: usize) -> Result<CudaSlice<T>> {
        self.stream.alloc_zeros::<T>(n.max(1)).dev("cuMemAlloc")
    }
    pub fn download<T: DeviceRepr + Default + Clone>(&self, dev: &CudaSlice<T>) -> Result<Vec<T>> {
        self.stream.clone_dtoh(dev).dev("cuMemcpyDtoH")
    }
    pub fn sync(&self) -> Result<()> {
        self.stream.synchronize().dev("cuStreamSynchronize")
    }

    /// Launches `f`.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in number, order and type (device
    /// pointers as `u64`), every pointer must address a live allocation of this context large
    /// enough for the grid, and the buffers must stay alive until the stream is synchronized.
    pub unsafe fn launch(&self, f: &Function, grid: (u32, u32, u32), block: (u32, u32, u32), smem: u32, args: &mut [*mut c_void]) -> Result<()> {
        self.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        result::launch_kernel(f.handle, grid, block, smem, self.stream.cu_stream(), args).dev(&format!("cuLaunchKernel({})", f.name))
    }
}

impl Gpu {
    /// Launches `f` on the raw stream `stream` (a caller's or the crate's).
    ///
    /// # Safety
    /// As [`Gpu::launch`], and `stream` must be a live stream of this context (or null).
    pub unsafe fn launch_on(&self, f: &Function, grid: (u32, u32, u32), block: (u32, u32, u32), smem: u32, stream: sys::CUstream, args: &mut [*mut c_void]) -> Result<()> {
        self.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        result::launch_kernel(f.handle, grid, block, smem, stream, args).dev(&format!("cuLaunchKernel({})", f.name))
    }

    /// Launches `f` on `stream` as a programmatic dependent launch: its CTAs may start while
    /// the previous kernel on the stream finishes, so their launch and set-up overlap its tail.
    ///
    /// # Safety
    /// As [`Gpu::launch_on`], and the kernel must execute `griddepcontrol.wait` before it
    /// touches global memory (the TMA GEMM does after its shared-memory set-up, the split-K
    /// conversion at its start).
    pub unsafe fn launch_programmatic_on(&self, f: &Function, grid: (u32, u32, u32), block: (u32, u32, u32), smem: u32, stream: sys::CUstream, args: &mut [*mut c_void]) -> Result<()> {
        self.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
        // SAFETY: a zeroed attribute is a valid plain union of integers; the config and the
        // attribute outlive the call, which copies them.
        let mut attr: sys::CUlaunchAttribute = std::mem::zeroed();
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: grid.0,
            gridDimY: grid.1,
            gridDimZ: grid.2,
            blockDimX: block.0,
            blockDimY: block.1,
            blockDimZ: block.2,
            sharedMemBytes: smem,
            hStream: stream,
            attrs: &mut attr,
            numAttrs: 1,
        };
        sys::cuLaunchKernelEx(&config, f.handle, args.as_mut_ptr(), std::ptr::null_mut()).result().dev(&format!("cuLaunchKernelEx({})", f.name))
    }
}

/// The raw device address of a buffer (the stream is the only one, so no event tracking).
pub(crate) fn ptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (p, _guard) = s.device_ptr(stream);
    p
}

/// One kernel argument for `Gpu::launch`: the address of a local that outlives the launch call.
pub(crate) fn arg<T>(v: &T) -> *mut c_void {
    v as *const T as *mut c_void
}
