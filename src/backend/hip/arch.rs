//! GPU-free facts about AMD architectures and code objects: arch-name parsing, the
//! architecture a code object was built for (from its ELF header).

/// `e_machine` of AMDGPU code objects.
const EM_AMDGPU: u16 = 224;
/// Low byte of `e_flags` in code object v4+: the target (`EF_AMDGPU_MACH_*`).
const EF_AMDGPU_MACH_MASK: u32 = 0xff;
/// `clang-offload-bundler` output starts with this magic; the runtime picks the entry for
/// the device from it.
pub const OFFLOAD_BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// `EF_AMDGPU_MACH_*` values, checked against `llvm-readelf-22 -h` on clang-22 output.
const MACH_TABLE: &[(u32, &str)] = &[
    (0x030, "gfx908"),
    (0x036, "gfx1030"),
    (0x03f, "gfx90a"),
    (0x040, "gfx940"),
    (0x041, "gfx1100"),
    (0x04b, "gfx941"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
];

/// "gfx942:sramecc+:xnack-" -> "gfx942" (HIP reports target features after colons).
pub fn base_arch(full: &str) -> &str {
    full.split(':').next().unwrap_or(full).trim()
}

/// Whether `s` looks like an AMD LLVM target name: "gfx" and 3 or 4 hex digits.
pub fn is_gfx_name(s: &str) -> bool {
    match s.strip_prefix("gfx") {
        Some(rest) => (3..=4).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        None => false,
    }
}

/// Whether rocBLAS ever shipped FP8 GEMM for this arch (gfx940, gfx941, gfx942 only).
pub fn rocblas_fp8_arch(arch: &str) -> bool {
    matches!(base_arch(arch), "gfx940" | "gfx941" | "gfx942")
}

/// What a code-object image is, from its first bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// A raw AMDGPU ELF; the arch from `e_flags` when the mach value is known.
    Elf { arch: Option<String>, mach: u32 },
    /// A clang offload bundle (possibly several archs).
    Bundle,
}

/// Classifies an image, or says why it cannot be a code object.
pub fn inspect_code_object(image: &[u8]) -> Result<ImageKind, String> {
    if image.starts_with(OFFLOAD_BUNDLE_MAGIC) {
        return Ok(ImageKind::Bundle);
    }
    if image.len() < 64 || &image[..4] != b"\x7fELF" {
        return Err(format!("not a code object ({} bytes, neither an ELF file nor a clang offload bundle)", image.len()));
    }
    if image[4] != 2 || image[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let machine = u16::from_le_bytes([image[18], image[19]]);
    if machine != EM_AMDGPU {
        return Err(format!("ELF for machine {machine}, not AMDGPU ({EM_AMDGPU})"));
    }
    let flags = u32::from_le_bytes([image[48], image[49], image[50], image[51]]);
    let mach = flags & EF_AMDGPU_MACH_MASK;
    let arch = MACH_TABLE.iter().find(|(m, _)| *m == mach).map(|(_, a)| a.to_string());
    Ok(ImageKind::Elf { arch, mach })
}

/// Accepts anything `hipModuleLoadData` could load.
pub fn check_code_object_image(image: &[u8]) -> Result<(), String> {
    inspect_code_object(image).map(|_| ())
}

/// Refuses a raw code object built for another architecture than `device_arch` (bundles
/// are left to the runtime, which picks the matching entry or fails).
pub fn check_code_object_for(image: &[u8], device_arch: &str) -> Result<(), String> {
    let want = base_arch(device_arch);
    match inspect_code_object(image)? {
        ImageKind::Elf { arch: Some(a), .. } if a != want => Err(format!("code object is for {a}, the device is {want}")),
        ImageKind::Elf { arch: None, mach } => Err(format!("code object targets an unknown AMDGPU mach 0x{mach:03x}, the device is {want}")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 header as clang-22 writes for AMDGPU (`e_flags` at byte 48).
    fn elf_header(machine: u16, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2; // 64-bit
        h[5] = 1; // little endian
        h[6] = 1;
        h[7] = 0x40; // ELFOSABI_AMDGPU_HSA
        h[16] = 3; // ET_DYN
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h
    }

    #[test]
    fn arch_names() {
        assert_eq!(base_arch("gfx942:sramecc+:xnack-"), "gfx942");
        assert_eq!(base_arch("gfx950"), "gfx950");
        assert!(is_gfx_name("gfx942") && is_gfx_name("gfx90a") && is_gfx_name("gfx1100"));
        assert!(!is_gfx_name("sm_90") && !is_gfx_name("gfx") && !is_gfx_name("gfx9422x") && !is_gfx_name("GFX942"));
        assert!(rocblas_fp8_arch("gfx942:sramecc+:xnack-") && !rocblas_fp8_arch("gfx950") && !rocblas_fp8_arch("gfx90a"));
    }

    #[test]
    fn code_object_arch_from_elf_flags() {
        // 0x54c is what clang-22 writes for --offload-arch=gfx942 (xnack any, sramecc any);
        // 0xe4c for gfx942:sramecc+:xnack-.
        for (flags, arch) in [(0x54c, "gfx942"), (0xe4c, "gfx942"), (0x54f, "gfx950"), (0x53f, "gfx90a")] {
            let img = elf_header(EM_AMDGPU, flags);
            assert_eq!(inspect_code_object(&img), Ok(ImageKind::Elf { arch: Some(arch.into()), mach: flags & 0xff }));
        }
        let gfx950 = elf_header(EM_AMDGPU, 0x54f);
        assert!(check_code_object_for(&gfx950, "gfx950:sramecc+:xnack-").is_ok());
        let err = check_code_object_for(&gfx950, "gfx942").unwrap_err();
        assert!(err.contains("gfx950") && err.contains("gfx942"), "{err}");
        let unknown = elf_header(EM_AMDGPU, 0x5ff);
        assert!(check_code_object_for(&unknown, "gfx942").unwrap_err().contains("0x0ff"));
    }

    #[test]
    fn refuses_what_is_not_a_code_object() {
        assert!(inspect_code_object(b"").unwrap_err().contains("0 bytes"));
        assert!(inspect_code_object(&[0u8; 100]).unwrap_err().contains("neither an ELF"));
        let x86 = elf_header(62, 0);
        assert!(inspect_code_object(&x86).unwrap_err().contains("machine 62"));
        let mut be = elf_header(EM_AMDGPU, 0x54c);
        be[5] = 2;
        assert!(inspect_code_object(&be).is_err());
        let mut bundle = OFFLOAD_BUNDLE_MAGIC.to_vec();
        bundle.extend_from_slice(&[0; 32]);
        assert_eq!(inspect_code_object(&bundle), Ok(ImageKind::Bundle));
        assert!(check_code_object_for(&bundle, "gfx942").is_ok());
    }
}
