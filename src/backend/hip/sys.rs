//! The raw HIP runtime entry points this crate calls, declared here rather than taken from
//! `hip-runtime-sys`: its functions return the Rust enum `hipError_t` generated from HIP 5.4,
//! and a status code a newer runtime adds (ROCm 6/7) arriving through that enum would be
//! undefined behaviour. Declared with `i32` returns, every status is read as a plain integer.
//! Handle types still come from `hip-runtime-sys` (plain pointers, no enums involved).
//!
//! Device properties: the struct changed layout in ROCm 6.0 (`hipDeviceProp_tR0600`), and
//! libamdhip64 exports `hipGetDevicePropertiesR0600` (new layout), `hipGetDevicePropertiesR0000`
//! (pre-6.0 layout) and the unversioned `hipGetDeviceProperties`, which AMD has said will
//! move to the new layout (ROCm/clr issue 151). So the unversioned symbol is not called on
//! any runtime where it could have the new layout: [`device_properties_entry`] resolves
//! R0600 where exported, else R0000, and reads each with its own layout ([`PropsLayout`]);
//! only a HIP 5.x runtime (no versioned symbols, one layout) gets the unversioned symbol.

use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

pub use hip_runtime_sys::{hipEvent_t, hipFunction_t, hipModule_t, hipStream_t};

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

/// The two layouts of `hipDeviceProp_t` the versioned entry points fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropsLayout {
    /// ROCm 6.0 and later (`hipGetDevicePropertiesR0600`): [`DevicePropR0600`].
    R0600,
    /// Before ROCm 6.0 (`hipGetDevicePropertiesR0000`): `hip_runtime_sys::hipDeviceProp_t`
    /// (HIP 5.4 bindings; the same layout as Debian's HIP 5.2.3 header, tested).
    R0000,
}

impl PropsLayout {
    /// The exported symbol, NUL-terminated.
    pub fn symbol(self) -> &'static [u8] {
        match self {
            PropsLayout::R0600 => b"hipGetDevicePropertiesR0600\0",
            PropsLayout::R0000 => b"hipGetDevicePropertiesR0000\0",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            PropsLayout::R0600 => "hipGetDevicePropertiesR0600",
            PropsLayout::R0000 => "hipGetDevicePropertiesR0000",
        }
    }
    /// Bytes the runtime writes.
    pub fn size(self) -> usize {
        match self {
            PropsLayout::R0600 => std::mem::size_of::<DevicePropR0600>(),
            PropsLayout::R0000 => std::mem::size_of::<hip_runtime_sys::hipDeviceProp_t>(),
        }
    }
    /// Byte offset of `char gcnArchName[256]` (the one field this crate reads).
    pub fn gcn_arch_name_offset(self) -> usize {
        match self {
            PropsLayout::R0600 => std::mem::offset_of!(DevicePropR0600, gcn_arch_name),
            PropsLayout::R0000 => std::mem::offset_of!(hip_runtime_sys::hipDeviceProp_t, gcnArchName),
        }
    }
    /// `gcnArchName` from a property buffer this layout's call filled (up to the first NUL).
    pub fn gcn_arch_name(self, props: &[u8]) -> String {
        let off = self.gcn_arch_name_offset();
        let field = &props[off.min(props.len())..(off + 256).min(props.len())];
        let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
        String::from_utf8_lossy(&field[..end]).into_owned()
    }
}

/// Property buffer size: both layouts with room to spare, in case a runtime writes more
/// than the layout it was bound for.
pub const PROPS_BUFFER_BYTES: usize = 8192;

/// `hipError_t hipGetDevicePropertiesR0600/R0000(props*, int device)`.
pub type GetPropsFn = unsafe extern "C" fn(*mut c_void, c_int) -> Status;

/// The resolved property entry point: its layout, the symbol bound, the function.
#[derive(Clone, Copy, Debug)]
pub struct PropsEntry {
    pub layout: PropsLayout,
    pub symbol: &'static str,
    pub call: GetPropsFn,
}

/// The property entry point of the loaded libamdhip64, resolved once from the process's
/// symbols: `hipGetDevicePropertiesR0600` where exported, else `hipGetDevicePropertiesR0000`.
/// A runtime older than 6.0 exports neither (HIP 5.x, like Debian's 5.2.3): there, and only
/// when `hipRuntimeGetVersion` confirms major version 5 or lower, the unversioned symbol is
/// bound, because before 6.0 it has no other layout than R0000. A 6.x or later runtime
/// without the versioned symbols is an error, never a guess.
pub fn device_properties_entry() -> Result<PropsEntry, String> {
    static ENTRY: OnceLock<Result<PropsEntry, String>> = OnceLock::new();
    ENTRY.get_or_init(|| resolve_props_entry(runtime_major_version())).clone()
}

fn runtime_major_version() -> Option<i32> {
    let mut v: c_int = 0;
    // SAFETY: plain out-parameter call.
    let status = unsafe { hipRuntimeGetVersion(&mut v) };
    (status == HIP_SUCCESS).then_some(v / 10_000_000)
}

/// [`device_properties_entry`] for a runtime of major version `major` (None: unknown).
pub fn resolve_props_entry(major: Option<i32>) -> Result<PropsEntry, String> {
    let this = libloading::os::unix::Library::this();
    for layout in [PropsLayout::R0600, PropsLayout::R0000] {
        // SAFETY: both symbols have the signature GetPropsFn in every HIP release that
        // exports them (hip_runtime_api.h); the library stays loaded (it is linked).
        if let Ok(f) = unsafe { this.get::<GetPropsFn>(layout.symbol()) } {
            return Ok(PropsEntry { layout, symbol: layout.name(), call: *f });
        }
    }
    match major {
        Some(m) if m <= 5 => {
            // SAFETY: as above; before HIP 6.0 this symbol fills the R0000 layout.
            let f = unsafe { this.get::<GetPropsFn>(b"hipGetDeviceProperties\0") }.map_err(|e| format!("HIP {m}.x runtime without hipGetDeviceProperties: {e}"))?;
            Ok(PropsEntry { layout: PropsLayout::R0000, symbol: "hipGetDeviceProperties (HIP 5.x, R0000 layout)", call: *f })
        }
        Some(m) => Err(format!("HIP runtime {m}.x exports neither hipGetDevicePropertiesR0600 nor hipGetDevicePropertiesR0000; the unversioned symbol's layout is unknown there, so it is not called")),
        None => Err("hipRuntimeGetVersion failed and no versioned hipGetDeviceProperties symbol is exported".into()),
    }
}

/// `hipDeviceProp_tR0600` (ROCm 6.x/7.x hip_runtime_api.h), field for field. Only
/// `gcn_arch_name` is read; the rest fixes its offset (tested: 1160, size 1472).
#[repr(C)]
#[allow(dead_code)]
pub struct DevicePropR0600 {
    pub name: [c_char; 256],
    pub uuid: [u8; 16],
    pub luid: [c_char; 8],
    pub luid_device_node_mask: c_uint,
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub mem_pitch: usize,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub clock_rate: c_int,
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub device_overlap: c_int,
    pub multi_processor_count: c_int,
    pub kernel_exec_timeout_enabled: c_int,
    pub integrated: c_int,
    pub can_map_host_memory: c_int,
    pub compute_mode: c_int,
    pub max_texture_1d: c_int,
    pub max_texture_1d_mipmap: c_int,
    pub max_texture_1d_linear: c_int,
    pub max_texture_2d: [c_int; 2],
    pub max_texture_2d_mipmap: [c_int; 2],
    pub max_texture_2d_linear: [c_int; 3],
    pub max_texture_2d_gather: [c_int; 2],
    pub max_texture_3d: [c_int; 3],
    pub max_texture_3d_alt: [c_int; 3],
    pub max_texture_cubemap: c_int,
    pub max_texture_1d_layered: [c_int; 2],
    pub max_texture_2d_layered: [c_int; 3],
    pub max_texture_cubemap_layered: [c_int; 2],
    pub max_surface_1d: c_int,
    pub max_surface_2d: [c_int; 2],
    pub max_surface_3d: [c_int; 3],
    pub max_surface_1d_layered: [c_int; 2],
    pub max_surface_2d_layered: [c_int; 3],
    pub max_surface_cubemap: c_int,
    pub max_surface_cubemap_layered: [c_int; 2],
    pub surface_alignment: usize,
    pub concurrent_kernels: c_int,
    pub ecc_enabled: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub pci_domain_id: c_int,
    pub tcc_driver: c_int,
    pub async_engine_count: c_int,
    pub unified_addressing: c_int,
    pub memory_clock_rate: c_int,
    pub memory_bus_width: c_int,
    pub l2_cache_size: c_int,
    pub persisting_l2_cache_max_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub stream_priorities_supported: c_int,
    pub global_l1_cache_supported: c_int,
    pub local_l1_cache_supported: c_int,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: c_int,
    pub managed_memory: c_int,
    pub is_multi_gpu_board: c_int,
    pub multi_gpu_board_group_id: c_int,
    pub host_native_atomic_supported: c_int,
    pub single_to_double_precision_perf_ratio: c_int,
    pub pageable_memory_access: c_int,
    pub concurrent_managed_access: c_int,
    pub compute_preemption_supported: c_int,
    pub can_use_host_pointer_for_registered_mem: c_int,
    pub cooperative_launch: c_int,
    pub cooperative_multi_device_launch: c_int,
    pub shared_mem_per_block_optin: usize,
    pub pageable_memory_access_uses_host_page_tables: c_int,
    pub direct_managed_mem_access_from_host: c_int,
    pub max_blocks_per_multi_processor: c_int,
    pub access_policy_max_window_size: c_int,
    pub reserved_shared_mem_per_block: usize,
    pub host_register_supported: c_int,
    pub sparse_hip_array_supported: c_int,
    pub host_register_read_only_supported: c_int,
    pub timeline_semaphore_interop_supported: c_int,
    pub memory_pools_supported: c_int,
    pub gpu_direct_rdma_supported: c_int,
    pub gpu_direct_rdma_flush_writes_options: c_uint,
    pub gpu_direct_rdma_writes_ordering: c_int,
    pub memory_pool_supported_handle_types: c_uint,
    pub deferred_mapping_hip_array_supported: c_int,
    pub ipc_event_supported: c_int,
    pub cluster_launch: c_int,
    pub unified_function_pointers: c_int,
    pub reserved: [c_int; 63],
    pub hip_reserved: [c_int; 32],
    pub gcn_arch_name: [c_char; 256],
    pub max_shared_memory_per_multi_processor: usize,
    pub clock_instruction_rate: c_int,
    /// hipDeviceArch_t: 17 one-bit flags in an unsigned int.
    pub arch: c_uint,
    pub hdp_mem_flush_cntl: *mut c_uint,
    pub hdp_reg_flush_cntl: *mut c_uint,
    pub cooperative_multi_device_unmatched_func: c_int,
    pub cooperative_multi_device_unmatched_grid_dim: c_int,
    pub cooperative_multi_device_unmatched_block_dim: c_int,
    pub cooperative_multi_device_unmatched_shared_mem: c_int,
    pub is_large_bar: c_int,
    pub asic_revision: c_int,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R0600: offsets computed with gcc (x86-64) from ROCm 6.x's hip_runtime_api.h
    /// `hipDeviceProp_t` (ROCm/clr), where it is the R0600 struct: gcnArchName at 1160,
    /// sizeof 1472; multiProcessorCount 388 and pciDeviceID 588 pin the middle of the struct.
    #[test]
    fn r0600_layout_matches_the_rocm6_header() {
        assert_eq!(std::mem::offset_of!(DevicePropR0600, gcn_arch_name), 1160);
        assert_eq!(std::mem::size_of::<DevicePropR0600>(), 1472);
        assert_eq!(std::mem::offset_of!(DevicePropR0600, multi_processor_count), 388);
        assert_eq!(std::mem::offset_of!(DevicePropR0600, pci_device_id), 588);
        assert_eq!(PropsLayout::R0600.gcn_arch_name_offset(), 1160);
        assert!(PropsLayout::R0600.size() <= PROPS_BUFFER_BYTES && PropsLayout::R0000.size() <= PROPS_BUFFER_BYTES);
    }

    /// R0000 against the HIP headers installed here (Debian libamdhip64-dev 5.2.3,
    /// /usr/include/hip, HIP_VERSION 5.2.21153): compiles offsetof with the system C++
    /// compiler. Where no header is installed the check says so and asserts the known value.
    #[test]
    fn r0000_layout_matches_the_installed_hip_header() {
        assert_eq!(PropsLayout::R0000.gcn_arch_name_offset(), 396, "HIP 5.x hipDeviceProp_t");
        assert_eq!(PropsLayout::R0000.size(), 792);
        let header = std::path::Path::new("/usr/include/hip/hip_runtime_api.h");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        if !header.exists() {
            eprintln!("SKIPPED header comparison: {} not installed (apt-get install libamdhip64-dev)", header.display());
            return;
        }
        let dir = std::env::temp_dir().join(format!("blockfp8_hipprops_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("offsets.cpp");
        std::fs::write(
            &src,
            "#define __HIP_PLATFORM_AMD__ 1\n#define __HIP_PLATFORM_HCC__ 1\n#include <hip/hip_runtime_api.h>\n#include <cstdio>\n#include <cstddef>\n\
             int main() { std::printf(\"%zu %zu\", offsetof(hipDeviceProp_t, gcnArchName), sizeof(hipDeviceProp_t)); }\n",
        )
        .unwrap();
        let exe = dir.join("offsets");
        let built = std::process::Command::new(&cxx).arg(&src).arg("-o").arg(&exe).output();
        match built {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!("{cxx} could not compile against {}: {}", header.display(), String::from_utf8_lossy(&o.stderr)),
            Err(e) => {
                eprintln!("SKIPPED header comparison: no C++ compiler ({cxx}: {e})");
                return;
            }
        }
        let out = std::process::Command::new(&exe).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let _ = std::fs::remove_dir_all(&dir);
        let want: Vec<usize> = text.split_whitespace().map(|v| v.parse().unwrap()).collect();
        assert_eq!(want, vec![PropsLayout::R0000.gcn_arch_name_offset(), PropsLayout::R0000.size()], "installed header vs binding");
    }

    #[test]
    fn gcn_arch_name_reads_its_layouts_offset() {
        for layout in [PropsLayout::R0600, PropsLayout::R0000] {
            let mut buf = vec![0u8; PROPS_BUFFER_BYTES];
            buf[..7].copy_from_slice(b"AMD MI3"); // the name field: not the arch
            let off = layout.gcn_arch_name_offset();
            buf[off..off + 22].copy_from_slice(b"gfx942:sramecc+:xnack-");
            assert_eq!(layout.gcn_arch_name(&buf), "gfx942:sramecc+:xnack-", "{layout:?}");
        }
        // Read with the other layout's offset, the field is empty: a mismatch cannot pass
        // as an architecture name.
        let mut buf = vec![0u8; PROPS_BUFFER_BYTES];
        buf[1160..1166].copy_from_slice(b"gfx950");
        assert_eq!(PropsLayout::R0000.gcn_arch_name(&buf), "");
    }

    /// The libamdhip64 linked here: Debian's 5.2.3 exports only the unversioned symbol
    /// (R0000 by definition before 6.0); ROCm 6/7 export the versioned ones, and R0600 wins.
    #[test]
    fn the_property_entry_point_follows_the_runtime_version() {
        let this = libloading::os::unix::Library::this();
        // SAFETY: symbol presence only.
        let has = |s: &[u8]| unsafe { this.get::<GetPropsFn>(s) }.is_ok();
        let entry = device_properties_entry().expect("libamdhip64 is linked");
        if has(b"hipGetDevicePropertiesR0600\0") {
            assert_eq!((entry.layout, entry.symbol), (PropsLayout::R0600, "hipGetDevicePropertiesR0600"));
        } else if has(b"hipGetDevicePropertiesR0000\0") {
            assert_eq!((entry.layout, entry.symbol), (PropsLayout::R0000, "hipGetDevicePropertiesR0000"));
        } else {
            assert_eq!(runtime_major_version().map(|m| m <= 5), Some(true), "only HIP 5.x lacks the versioned symbols");
            assert_eq!(entry.layout, PropsLayout::R0000);
            assert!(entry.symbol.contains("HIP 5.x"));
            // The same library claimed as a 6.x or 7.x runtime: refused, not guessed.
            for major in [6, 7] {
                let e = resolve_props_entry(Some(major)).unwrap_err();
                assert!(e.contains("not called"), "{e}");
            }
        }
    }
}
