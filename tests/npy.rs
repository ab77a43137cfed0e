//! .npy headers that lie about their size: a shape whose element count overflows 64 bits,
//! and files shorter than their header declares, are refused with what is wrong (the
//! declared size and the bytes present), never a panic or a bare "failed to fill whole buffer".

use std::path::Path;

use blockfp8::npy;

/// A format 1.0 file written byte by byte: `header_shape` as it appears in the header
/// (e.g. "(4, 8)"), then `data` as is.
fn write_npy(path: &Path, descr: &str, header_shape: &str, data: &[u8]) {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {header_shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_well_formed_file_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ok.npy");
    let values: Vec<f32> = (0..6).map(|i| i as f32 * 0.5).collect();
    write_npy(&p, "<f4", "(2, 3)", &values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    let a = npy::read(&p).unwrap();
    assert_eq!(a.shape, vec![2, 3]);
    assert_eq!(a.into_f32("ok").unwrap(), values);
}

#[test]
fn a_shape_overflowing_64_bits_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.npy");
    // 2^40 * 2^40 elements: the product overflows u64.
    write_npy(&p, "|u1", "(1099511627776, 1099511627776)", &[0u8; 16]);
    let e = npy::read(&p).unwrap_err().to_string();
    assert!(e.contains("overflows 64 bits") && e.contains("1099511627776"), "{e}");
    // Element count fits, bytes do not (2^62 float32 values).
    let p = dir.path().join("huge_bytes.npy");
    write_npy(&p, "<f4", "(4611686018427387904,)", &[0u8; 16]);
    let e = npy::read(&p).unwrap_err().to_string();
    assert!(e.contains("overflows 64 bits"), "{e}");
}

#[test]
fn a_truncated_file_says_declared_and_present_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("short.npy");
    // [4, 8] float32 = 128 bytes declared, 100 present.
    write_npy(&p, "<f4", "(4, 8)", &[0u8; 100]);
    let e = npy::read(&p).unwrap_err().to_string();
    assert!(e.contains("128 bytes") && e.contains("100 bytes") && e.contains("short.npy"), "{e}");
    assert!(!e.contains("failed to fill whole buffer"), "{e}");
    // A header cut short.
    let full = std::fs::read(&p).unwrap();
    let cut = dir.path().join("cut.npy");
    std::fs::write(&cut, &full[..40]).unwrap();
    let e = npy::read(&cut).unwrap_err().to_string();
    assert!(e.contains("40 bytes") && e.contains("truncated"), "{e}");
    // Not a .npy file at all.
    let text = dir.path().join("text.npy");
    std::fs::write(&text, "hello, world").unwrap();
    assert!(npy::read(&text).unwrap_err().to_string().contains("not a .npy file"));
}
