//! File names, byte for byte as vLLM and SGLang write them, and their parsers.
//!
//! Dense: `N={n},K={k},device_name={device},dtype={dtype},block_shape=[{bn},{bk}].json`
//! MoE:   `E={e},N={n},device_name={device}[,dtype={dtype}][,block_shape=[{bn},{bk}]].json`
//!
//! The device part is the device's config name (spaces and `/` replaced by `_`, see
//! [`crate::device::config_name_for`]); the functions here apply that replacement, which
//! leaves an already converted name unchanged.

use crate::device::config_name_for;

/// The AMD architecture of a device config name ("AMD_Instinct_MI300X" -> gfx942), for
/// the names vLLM's AMD files use; None for other devices.
pub fn amd_arch_for_config_name(device: &str) -> Option<&'static str> {
    let d = device.to_ascii_uppercase();
    if !d.contains("MI3") {
        return None;
    }
    if ["MI350", "MI355"].iter().any(|x| d.contains(x)) {
        Some("gfx950")
    } else if ["MI300", "MI308", "MI325"].iter().any(|x| d.contains(x)) {
        Some("gfx942")
    } else {
        None
    }
}

/// The key of one dense config file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DenseKey {
    pub n: usize,
    pub k: usize,
    /// Config name of the device ("NVIDIA_H200", "AMD_Instinct_MI300X").
    pub device: String,
    /// "fp8_w8a8" or "int8_w8a8".
    pub dtype: String,
    /// Scale block (block_n, block_k).
    pub block: (usize, usize),
}

impl DenseKey {
    pub fn file_name(&self) -> String {
        dense_file_name(self.n, self.k, &self.device, &self.dtype, self.block)
    }
}

impl std::fmt::Display for DenseKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "device={} N={} K={} dtype={} block=[{},{}]", self.device, self.n, self.k, self.dtype, self.block.0, self.block.1)
    }
}

/// The key of one fused-MoE config file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MoeKey {
    pub e: usize,
    pub n: usize,
    pub device: String,
    pub dtype: Option<String>,
    pub block: Option<(usize, usize)>,
}

impl MoeKey {
    pub fn file_name(&self) -> String {
        moe_file_name(self.e, self.n, &self.device, self.dtype.as_deref(), self.block)
    }
}

/// Either kind of config file name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKey {
    Dense(DenseKey),
    Moe(MoeKey),
}

/// `N={n},K={k},device_name={device},dtype={dtype},block_shape=[{bn},{bk}].json`
pub fn dense_file_name(n: usize, k: usize, device: &str, dtype: &str, block: (usize, usize)) -> String {
    format!("N={n},K={k},device_name={},dtype={dtype},block_shape=[{},{}].json", config_name_for(device), block.0, block.1)
}

/// The weight block every shipped config file uses, and the one `--shape N,K` means.
pub const DEFAULT_BLOCK: (usize, usize) = (128, 128);

/// A dense shape as `blockfp8 tune --shape` takes it: `N,K`, with `,BLOCK_N,BLOCK_K` only for a
/// block other than [`DEFAULT_BLOCK`].
pub fn shape_arg(n: usize, k: usize, block: (usize, usize)) -> String {
    if block == DEFAULT_BLOCK {
        format!("{n},{k}")
    } else {
        format!("{n},{k},{},{}", block.0, block.1)
    }
}

/// `E={e},N={n},device_name={device}[,dtype={dtype}][,block_shape=[{bn},{bk}]].json`
///
/// As in vLLM, an empty dtype is left out, and the block shape only appears when both
/// sides are non-zero.
pub fn moe_file_name(e: usize, n: usize, device: &str, dtype: Option<&str>, block: Option<(usize, usize)>) -> String {
    let mut s = format!("E={e},N={n},device_name={}", config_name_for(device));
    if let Some(d) = dtype.filter(|d| !d.is_empty()) {
        s += &format!(",dtype={d}");
    }
    if let Some((bn, bk)) = block.filter(|&(bn, bk)| bn != 0 && bk != 0) {
        s += &format!(",block_shape=[{bn},{bk}]");
    }
    s + ".json"
}

/// Parses a canonical dense file name (exactly what [`dense_file_name`] writes); `None` for
/// anything else, including names with spaces in `block_shape`, leading zeros, or zeros.
pub fn parse_dense_file_name(name: &str) -> Option<DenseKey> {
    let rest = name.strip_suffix(".json")?.strip_prefix("N=")?;
    let (n, rest) = rest.split_once(",K=")?;
    let (k, rest) = rest.split_once(",device_name=")?;
    // The device name is the only free-form part: take dtype and block from the right.
    let (device, rest) = rest.rsplit_once(",dtype=")?;
    let (dtype, shape) = rest.split_once(",block_shape=")?;
    let key = DenseKey {
        n: parse_positive(n)?,
        k: parse_positive(k)?,
        device: valid_device(device)?.to_string(),
        dtype: valid_dtype(dtype)?.to_string(),
        block: parse_block(shape)?,
    };
    // Canonical only: the name must be the one the library would look for.
    (key.file_name() == name).then_some(key)
}

/// Parses a canonical fused-MoE file name (exactly what [`moe_file_name`] writes).
pub fn parse_moe_file_name(name: &str) -> Option<MoeKey> {
    let rest = name.strip_suffix(".json")?.strip_prefix("E=")?;
    let (e, rest) = rest.split_once(",N=")?;
    let (n, rest) = rest.split_once(",device_name=")?;
    let (rest, block) = match rest.rsplit_once(",block_shape=") {
        Some((before, shape)) => (before, Some(parse_block(shape)?)),
        None => (rest, None),
    };
    let (device, dtype) = match rest.rsplit_once(",dtype=") {
        Some((dev, dt)) => (dev, Some(valid_dtype(dt)?.to_string())),
        None => (rest, None),
    };
    let key = MoeKey { e: parse_positive(e)?, n: parse_positive(n)?, device: valid_device(device)?.to_string(), dtype, block };
    (key.file_name() == name).then_some(key)
}

/// Dense first, then MoE.
pub fn parse_file_name(name: &str) -> Option<FileKey> {
    parse_dense_file_name(name).map(FileKey::Dense).or_else(|| parse_moe_file_name(name).map(FileKey::Moe))
}

/// Decimal digits only, no leading zero, > 0, and small enough to be a tensor dimension.
fn parse_positive(s: &str) -> Option<usize> {
    if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) || s.starts_with('0') {
        return None;
    }
    let v: u64 = s.parse().ok()?;
    (v <= u32::MAX as u64).then_some(v as usize)
}

fn parse_block(s: &str) -> Option<(usize, usize)> {
    let (bn, bk) = s.strip_prefix('[')?.strip_suffix(']')?.split_once(',')?;
    Some((parse_positive(bn)?, parse_positive(bk)?))
}

fn valid_device(s: &str) -> Option<&str> {
    let ok = !s.is_empty() && config_name_for(s) == s && !s.contains(',') && !s.contains('=');
    ok.then_some(s)
}

fn valid_dtype(s: &str) -> Option<&str> {
    let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_round_trip() {
        let name = "N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json";
        let key = parse_dense_file_name(name).unwrap();
        assert_eq!((key.n, key.k, key.device.as_str(), key.dtype.as_str(), key.block), (1536, 7168, "NVIDIA_H200", "fp8_w8a8", (128, 128)));
        assert_eq!(key.file_name(), name);
    }

    #[test]
    fn non_canonical_names_rejected() {
        for bad in [
            "N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json",
            "N=01536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=0,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1536,K=7168,device_name=,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1536,K=7168,device_name=NVIDIA H200,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].JSON",
            "N=-1,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=99999999999,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json",
        ] {
            assert_eq!(parse_dense_file_name(bad), None, "{bad}");
        }
    }
}
