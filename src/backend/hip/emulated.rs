//! The emulated HIP device: the HIP backend's device-API path (argument packing, plans,
//! workspaces, the chunked rocBLAS path) on the CPU. Device memory is host memory, launches run
//! the same `hip/*.hip` sources under the wavefront/MFMA emulation (`emulator`), and rocBLAS
//! calls run its documented semantics (`vendor_plan::simulate`), with the FP8 availability of
//! ROCm 6.x's rocBLAS 4.x. Ordinal 0 is a gfx942 device (MI300X, e4m3fnuz), ordinal 1 a gfx950
//! (MI355X, e4m3fn). Slow (every work-item is a fiber); it says nothing about GPU speed.

use std::sync::Arc;

use super::abi;
use super::emulator::{self, Arch};
use super::exec;
use super::kernels::{self, GemmKernel};
use super::launcher::HipLauncher;
use super::rocblas;
use super::runtime::{DevicePtr, LaunchConfig};
use super::vendor_plan::{self, BatchedGemm};
use crate::backend::{Backend, GemmLaunch, QuantTokensArgs, QuantWeightArgs};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::types::{BackendKind, GemmPath, GemmShape, InputDtype, OutDtype, ScaleLayout};

/// The rocBLAS release the emulated device stands for (ROCm 6.4, FP8 GEMM present).
const EMULATED_ROCBLAS: &str = "4.4.0";

struct EmuLauncher {
    arch: Arch,
    compute_units: u32,
}

impl HipLauncher for EmuLauncher {
    unsafe fn gemm(&self, _stream: &Stream, kernel: &GemmKernel, cfg: LaunchConfig, args: &abi::GemmArgs) -> Result<()> {
        emulator::launch::gemm(self.arch, kernel, (cfg.grid.0, cfg.grid.1), args)
    }
    unsafe fn scale_reduce(&self, _stream: &Stream, out: OutDtype, cfg: LaunchConfig, args: &abi::ScaleReduceArgs) -> Result<()> {
        emulator::launch::scale_reduce(self.arch, out, cfg.grid.0, args)
    }
    unsafe fn quant_tokens(&self, _stream: &Stream, input: InputDtype, cfg: LaunchConfig, args: &abi::QuantTokensArgs) -> Result<()> {
        emulator::launch::quant_tokens(self.arch, input, cfg.grid.0, args)
    }
    unsafe fn quant_weight(&self, _stream: &Stream, input: InputDtype, cfg: LaunchConfig, args: &abi::QuantWeightArgs) -> Result<()> {
        emulator::launch::quant_weight(self.arch, input, (cfg.grid.0, cfg.grid.1), args)
    }
    unsafe fn convert_to_fnuz(&self, _stream: &Stream, cfg: LaunchConfig, args: &abi::ConvertFnuzArgs) -> Result<()> {
        emulator::launch::convert_to_fnuz(self.arch, cfg.grid.0, args)
    }
    unsafe fn vendor_gemm(&self, _stream: &Stream, call: &BatchedGemm, weight: DevicePtr<u8>, act: DevicePtr<u8>, work: DevicePtr<f32>) -> Result<()> {
        emulator::launch::vendor_gemm(self.arch, call, weight.as_raw() as *const u8, act.as_raw() as *const u8, work.as_raw() as *mut f32)
    }
    unsafe fn zero(&self, _stream: &Stream, ptr: DevicePtr<u8>, bytes: usize) -> Result<()> {
        std::ptr::write_bytes(ptr.as_raw() as *mut u8, 0, bytes);
        Ok(())
    }
    fn compute_units(&self) -> u32 {
        self.compute_units
    }
    fn vendor_name(&self) -> String {
        format!("emulated rocBLAS {EMULATED_ROCBLAS}")
    }
}

/// An emulated AMD GPU (see the module doc).
pub struct EmulatedHip {
    device: Device,
    launcher: Arc<EmuLauncher>,
    vendor: std::result::Result<(), String>,
    workspace_bytes: usize,
}

impl EmulatedHip {
    /// Ordinal 0: gfx942 (MI300X); 1: gfx950 (MI355X).
    pub fn new(ordinal: usize) -> Result<Self> {
        let (arch, name, pci_id, cus) = match ordinal {
            0 => (Arch::Gfx942, "AMD Instinct MI300X", Some(0x74a1), 304),
            1 => (Arch::Gfx950, "AMD Instinct MI355X", None, 256),
            _ => return Err(Error::BackendUnavailable { backend: "hip-emu", reason: format!("emulated device {ordinal} requested; 0 (gfx942) and 1 (gfx950) exist") }),
        };
        let device = Device { backend: BackendKind::HipEmulator, ordinal, name: name.into(), arch: arch.name().into(), fp8: arch.fp8(), compute_units: cus, pci_id };
        let vendor = match rocblas::fp8_unavailable_reason(EMULATED_ROCBLAS, true, arch.name()) {
            None => Ok(()),
            Some(why) => Err(why),
        };
        Ok(EmulatedHip { device, launcher: Arc::new(EmuLauncher { arch, compute_units: cus }), vendor, workspace_bytes: vendor_plan::DEFAULT_WORKSPACE_BYTES })
    }

    /// Bounds the rocBLAS path's fp32 workspace (default 256 MiB), as on the real device: a
    /// small bound makes the vendor path run in M chunks.
    pub fn set_workspace_bytes(&mut self, bytes: usize) {
        self.workspace_bytes = bytes.max(1);
    }

    fn dyn_launcher(&self) -> Arc<dyn HipLauncher> {
        Arc::clone(&self.launcher) as Arc<dyn HipLauncher>
    }
}

impl Backend for EmulatedHip {
    fn kind(&self) -> BackendKind {
        BackendKind::HipEmulator
    }
    fn device(&self) -> &Device {
        &self.device
    }
    crate::memory::host_memory_primitives!();
    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        let vendor = self.vendor.as_ref().map(|_| ()).map_err(|why| why.as_str());
        super::check_support_of(&self.device, vendor, self.workspace_bytes, shape, path, true)
    }
    fn resolve_gemm(&self, shape: &GemmShape, path: &GemmPath, layout: ScaleLayout) -> Result<Box<dyn GemmLaunch>> {
        self.supports(shape, path).map_err(|reason| Error::Unsupported { path: format!("hip-emu {}", path.label()), reason })?;
        exec::resolve(&self.dyn_launcher(), shape, path, layout, self.workspace_bytes, true)
    }
    unsafe fn enqueue_quantize_tokens(&self, stream: &Stream, a: &QuantTokensArgs) -> Result<()> {
        exec::quantize_tokens(&*self.launcher, &self.device, stream, a)
    }
    unsafe fn enqueue_quantize_weight(&self, stream: &Stream, a: &QuantWeightArgs) -> Result<()> {
        exec::quantize_weight(&*self.launcher, &self.device, stream, a)
    }
    unsafe fn enqueue_convert_to_fnuz(&self, stream: &Stream, q: u64, bytes: usize, s: u64, scales: usize) -> Result<()> {
        exec::convert_to_fnuz(&*self.launcher, stream, q, bytes, s, scales)
    }
    /// The kernels the emulation library carries.
    fn candidate_configs(&self) -> Vec<KernelConfig> {
        exec::distinct_configs(emulator::emulated_gemm_kernels())
    }
    fn default_config(&self) -> KernelConfig {
        kernels::default_gemm_config()
    }
}
