//! Devices: names, config file names, architecture, fp8 flavour, compute units.

use crate::types::BackendKind;
use crate::error::{Error, Result};
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
    /// The host CPU: name from /proc/cpuinfo where available, the rayon thread count as
    /// compute units. The CPU backend computes in either flavour; e4m3fn is its default.
    pub fn cpu() -> Self {
        let name = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| cpu_model_name(&s)).unwrap_or_else(|| "CPU".to_string());
        Device {
            backend: BackendKind::Cpu,
            ordinal: 0,
            name,
            arch: std::env::consts::ARCH.to_string(),
            fp8: Fp8Format::E4m3fn,
            compute_units: u32::try_from(rayon::current_num_threads()).unwrap_or(u32::MAX),
            pci_id: None,
        }
    }

    /// The name used in config file names ("AMD_Instinct_MI300X", "NVIDIA_H100_80GB_HBM3").
    /// AMD devices whose PCI id vLLM maps get vLLM's name, so that its files are found
    /// whatever marketing string the driver reports.
    pub fn config_name(&self) -> String {
        if self.backend.is_amd() {
            if let Some(mapped) = self.pci_id.and_then(amd_name_for_pci_id) {
                return mapped.to_string();
            }
        }
        config_name_for(&self.name)
    }
}

/// A marketing name as it appears in config file names: spaces and `/` become `_`
/// (vLLM's rule), as do `\` and control characters so that the result is always one
/// plain file-name component. Idempotent.
pub fn config_name_for(name: &str) -> String {
    name.chars().map(|c| if c == ' ' || c == '/' || c == '\\' || c.is_control() { '_' } else { c }).collect()
}

/// vLLM's `_ROCM_DEVICE_ID_NAME_MAP` (vllm/platforms/rocm.py): PCI device id -> config name.
const AMD_PCI_NAMES: &[(u16, &str)] = &[
    (0x74a0, "AMD_Instinct_MI300A"),
    (0x74a1, "AMD_Instinct_MI300X"),
    (0x74b5, "AMD_Instinct_MI300X"), // MI300X virtual function
    (0x74a2, "AMD_Instinct_MI308X"),
    (0x74a5, "AMD_Instinct_MI325X"),
    (0x74b9, "AMD_Instinct_MI325X"), // MI325X virtual function
    (0x74a9, "AMD_Instinct_MI300X_HF"),
    (0x74bd, "AMD_Instinct_MI300X_HF"),
];

/// The config name vLLM uses for an AMD PCI device id, if it maps that id.
pub fn amd_name_for_pci_id(id: u16) -> Option<&'static str> {
    AMD_PCI_NAMES.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
}

/// Parses a sysfs PCI id file's content ("0x74a1\n").
pub fn parse_pci_id(text: &str) -> Option<u16> {
    let t = text.trim();
    let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    if hex.is_empty() || hex.len() > 4 {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

/// The PCI device id of the device at `bus_id` ("0000:c1:00.0", as hipDeviceGetPCIBusId
/// gives it), read from /sys/bus/pci/devices/<bus_id>/device; `None` off Linux or when absent.
pub fn pci_id_for_bus(bus_id: &str) -> Option<u16> {
    let bus_id = bus_id.trim().to_ascii_lowercase();
    // A bus id is hex digits, ':' and '.'; anything else must not reach a path.
    if bus_id.is_empty() || !bus_id.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.') {
        return None;
    }
    let text = std::fs::read_to_string(format!("/sys/bus/pci/devices/{bus_id}/device")).ok()?;
    parse_pci_id(&text)
}

/// The fp8 flavour of an AMD architecture ("gfx942", or HIP's "gfx942:sramecc+:xnack-").
pub fn fp8_for_gfx(arch: &str) -> Result<Fp8Format> {
    let base = arch.split(':').next().unwrap_or("").trim();
    match base {
        // CDNA3: MFMA fp8 reads the fnuz encoding.
        "gfx940" | "gfx941" | "gfx942" => Ok(Fp8Format::E4m3fnuz),
        // CDNA4: OCP fp8.
        "gfx950" => Ok(Fp8Format::E4m3fn),
        _ => Err(Error::Unsupported {
            path: format!("device architecture {arch:?}"),
            reason: "no fp8 matrix instructions this crate targets (gfx940/gfx941/gfx942 read e4m3fnuz, gfx950 reads e4m3fn)".into(),
        }),
    }
}

/// The fp8 flavour of an NVIDIA compute capability: e4m3fn from sm_89 (Ada) on.
pub fn fp8_for_compute_capability(major: u32, minor: u32) -> Result<Fp8Format> {
    if (major, minor) >= (8, 9) {
        Ok(Fp8Format::E4m3fn)
    } else {
        Err(Error::Unsupported {
            path: format!("compute capability {major}.{minor}"),
            reason: "fp8 tensor cores need compute capability 8.9 or newer".into(),
        })
    }
}

/// The first "model name" line of /proc/cpuinfo, trimmed, inner runs of spaces collapsed.
pub fn cpu_model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        if key.trim() != "model name" {
            return None;
        }
        let v = value.split_whitespace().collect::<Vec<_>>().join(" ");
        (!v.is_empty()).then_some(v)
    })
}
