//! Devices: names, config file names, architecture, fp8 flavour, compute units.

use crate::backend::BackendKind;
use crate::formats::Fp8Format;

#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub backend: BackendKind,
    pub ordinal: usize,
    /// Marketing name as the runtime reports it ("AMD Instinct MI300X", "NVIDIA H200").
    pub name: String,
    /// "gfx942", "gfx950", "sm_90", "x86_64"...
    pub arch: String,
    /// The fp8 flavour the device's matrix units read.
    pub fp8: Fp8Format,
    /// CUs (AMD), SMs (NVIDIA), or CPU threads.
    pub compute_units: u32,
    /// PCI device id, where known (AMD names from vLLM's PCI-id table take precedence).
    pub pci_id: Option<u16>,
}

impl Device {
    pub fn cpu() -> Self {
        todo!("H2")
    }
    /// The name used in config file names ("AMD_Instinct_MI300X", "NVIDIA_H100_80GB_HBM3").
    pub fn config_name(&self) -> String {
        todo!("H2")
    }
}
