//! Device enumeration: what `blockfp8 info` lists and what `HipBackend::new` opens.

use super::arch;
use super::runtime::result;
use super::sys;
use crate::backend::BackendKind;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::formats::Fp8Format;

/// A device as the runtime describes it, plus the full target string.
#[derive(Clone, Debug)]
pub struct Probed {
    pub device: Device,
    /// gcnArchName with target features ("gfx942:sramecc+:xnack-").
    pub full_arch: String,
}

/// Why there is no device, in words: "hipGetDeviceCount: hipErrorNoDevice (100): ...".
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

/// The fp8 flavour the matrix units of `gfx` read.
pub fn fp8_for_arch(gfx: &str) -> Result<Fp8Format> {
    match arch::base_arch(gfx) {
        "gfx940" | "gfx941" | "gfx942" => Ok(Fp8Format::E4m3fnuz),
        "gfx950" => Ok(Fp8Format::E4m3fn),
        other => Err(Error::Unsupported {
            path: format!("device architecture {other:?}"),
            reason: "no fp8 matrix instructions this crate targets (gfx940/941/942 read e4m3fnuz, gfx950 reads e4m3fn)".into(),
        }),
    }
}

/// Queries device `ordinal`. The PCI id comes from `hipDeviceAttributePciDeviceId` (or sysfs
/// when the runtime does not answer), so vLLM's PCI-id config names apply.
pub fn probe(ordinal: usize) -> Result<Probed> {
    let name = result::device_name(ordinal)?;
    let full_arch = result::gcn_arch_name(ordinal)?;
    let gfx = arch::base_arch(&full_arch).to_string();
    let compute_units = result::attribute(ordinal, sys::ATTR_MULTIPROCESSOR_COUNT, "hipDeviceGetAttribute(MultiprocessorCount)")?;
    let pci_id = match result::attribute(ordinal, sys::ATTR_PCI_DEVICE_ID, "hipDeviceGetAttribute(PciDeviceId)") {
        Ok(id) => u16::try_from(id).ok(),
        Err(e) => {
            log::debug!("rocm device {ordinal}: {e}; trying sysfs");
            result::attribute(ordinal, sys::ATTR_PCI_BUS_ID, "hipDeviceGetAttribute(PciBusId)").ok().and_then(|bus| arch::pci_id_from_sysfs(bus as u32))
        }
    };
    // An arch without fp8 MFMA is still listed (info shows it); the backend refuses it.
    let fp8 = fp8_for_arch(&gfx).unwrap_or(Fp8Format::E4m3fn);
    Ok(Probed {
        device: Device { backend: BackendKind::Rocm, ordinal, name, arch: gfx, fp8, compute_units: compute_units.max(0) as u32, pci_id },
        full_arch,
    })
}

/// Every HIP device; empty (reason logged at debug) where there is none.
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
                log::debug!("rocm device {i} not listed: {e}");
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_flavours() {
        assert_eq!(fp8_for_arch("gfx942:sramecc+:xnack-").unwrap(), Fp8Format::E4m3fnuz);
        assert_eq!(fp8_for_arch("gfx950").unwrap(), Fp8Format::E4m3fn);
        let e = fp8_for_arch("gfx90a").unwrap_err().to_string();
        assert!(e.contains("gfx90a"), "{e}");
    }
}
