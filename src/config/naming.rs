//! File names, byte for byte as vLLM and SGLang write them.

/// `N={n},K={k},device_name={device},dtype={dtype},block_shape=[{bn},{bk}].json`
pub fn dense_file_name(n: usize, k: usize, device: &str, dtype: &str, block: (usize, usize)) -> String {
    let _ = (n, k, device, dtype, block);
    todo!("H2")
}

/// `E={e},N={n},device_name={device}[,dtype={dtype}][,block_shape=[{bn},{bk}]].json`
pub fn moe_file_name(e: usize, n: usize, device: &str, dtype: Option<&str>, block: Option<(usize, usize)>) -> String {
    let _ = (e, n, device, dtype, block);
    todo!("H2")
}
