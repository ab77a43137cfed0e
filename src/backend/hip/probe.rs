//! Device enumeration: what `blockfp8 info` lists and what `HipBackend::new` opens.

use super::arch;
use super::runtime::result;
use super::sys;
use crate::backend::BackendKind;
use crate::device::{fp8_for_gfx, pci_id_for_bus, Device};
use crate::error::{Error, Result};

/// A device as the runtime describes it, plus the full target string.
#[derive(Clone, Debug)]
pub struct Probed {
    pub device: Device,
    /// gcnArchName with target features ("gfx942:sramecc+:xnack-").
    pub full_arch: String,
}

/// Why there is no device, in words: "hipGetDeviceCount answered hipErrorNoDevice (100) ...".
pub fn no_device_reason() -> Option<String> {
    let (status, n) = result::device_count_status();
    if status == sys::HIP_SUCCESS && n > 0 {
        return None;
    }
    if status == sys::HIP_SUCCESS {
        return Some("hipGetDeviceCount reports 0 devices".into());
    }
    Some(format!("hipGetDeviceCount answered {} (no AMD GPU visible to the HIP runtime)", super::runtime::status_text(status)))
}

/// Builds the `Device` from the runtime's answers (GPU-free, so it is tested here): the arch
/// loses its target features, the fp8 flavour follows the arch (an arch without fp8 MFMA
/// is an error), the PCI id is kept so that vLLM's PCI-id config names apply.
pub fn assemble(ordinal: usize, name: String, full_arch: &str, compute_units: i32, pci_id: Option<u16>) -> Result<Probed> {
    let gfx = arch::base_arch(full_arch);
    if !arch::is_gfx_name(gfx) {
        return Err(Error::invalid("rocm device", format!("{full_arch:?} is not an AMD gfx architecture")));
    }
    let fp8 = fp8_for_gfx(gfx)?;
    Ok(Probed {
        device: Device { backend: BackendKind::Rocm, ordinal, name, arch: gfx.to_string(), fp8, compute_units: compute_units.max(0) as u32, pci_id },
        full_arch: full_arch.to_string(),
    })
}

/// Queries device `ordinal`. The PCI id comes from `hipDeviceAttributePciDeviceId`, or
/// from sysfs (by PCI bus id) when the runtime does not answer.
pub fn probe(ordinal: usize) -> Result<Probed> {
    let name = result::device_name(ordinal)?;
    let full_arch = result::gcn_arch_name(ordinal)?;
    let compute_units = result::attribute(ordinal, sys::ATTR_MULTIPROCESSOR_COUNT, "hipDeviceGetAttribute(MultiprocessorCount)")?;
    let pci_id = match result::attribute(ordinal, sys::ATTR_PCI_DEVICE_ID, "hipDeviceGetAttribute(PciDeviceId)") {
        Ok(id) => u16::try_from(id).ok(),
        Err(e) => {
            log::debug!("rocm device {ordinal}: {e}; reading the PCI id from sysfs");
            result::pci_bus_id(ordinal).ok().and_then(|bus| pci_id_for_bus(&bus))
        }
    };
    assemble(ordinal, name, &full_arch, compute_units, pci_id)
}

/// Every HIP device this crate can use; empty (reason logged at debug) where there is none.
/// A device without fp8 matrix instructions is left out, with the reason logged.
pub fn devices() -> Vec<Device> {
    let n = match result::device_count() {
        Ok(n) => n,
        Err(e) => {
            log::debug!("rocm: no devices listed: {e}");
            return Vec::new();
        }
    };
    if n == 0 {
        log::debug!("rocm: no devices listed: {}", no_device_reason().unwrap_or_default());
        return Vec::new();
    }
    (0..n)
        .filter_map(|i| match probe(i) {
            Ok(p) => Some(p.device),
            Err(e) => {
                log::info!("rocm device {i} not listed: {e}");
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Fp8Format;

    #[test]
    fn devices_from_runtime_answers() {
        let p = assemble(0, "AMD Instinct MI300X".into(), "gfx942:sramecc+:xnack-", 304, Some(0x74a1)).unwrap();
        assert_eq!((p.device.arch.as_str(), p.device.fp8, p.device.compute_units), ("gfx942", Fp8Format::E4m3fnuz, 304));
        assert_eq!(p.device.config_name(), "AMD_Instinct_MI300X");
        assert_eq!(p.full_arch, "gfx942:sramecc+:xnack-");
        // The driver's marketing string loses to vLLM's PCI-id name (MI325X is 0x74a5).
        let p = assemble(1, "AMD Radeon Graphics".into(), "gfx942:sramecc+:xnack-", 304, Some(0x74a5)).unwrap();
        assert_eq!(p.device.config_name(), "AMD_Instinct_MI325X");
        // Unknown PCI id: the reported name, vLLM-style.
        let p = assemble(0, "AMD Instinct MI355X".into(), "gfx950:sramecc+:xnack-", 256, Some(0x75a3)).unwrap();
        assert_eq!((p.device.fp8, p.device.config_name().as_str()), (Fp8Format::E4m3fn, "AMD_Instinct_MI355X"));
    }

    #[test]
    fn unusable_archs_are_errors() {
        let e = assemble(0, "AMD Instinct MI250X".into(), "gfx90a:sramecc+:xnack-", 220, None).unwrap_err().to_string();
        assert!(e.contains("gfx90a"), "{e}");
        let e = assemble(0, "x".into(), "sm_90", 1, None).unwrap_err().to_string();
        assert!(e.contains("sm_90"), "{e}");
    }
}
