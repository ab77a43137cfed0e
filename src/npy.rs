//! NumPy `.npy` files for the CLI, so users can check the crate against their own Python
//! reference. Conventions (also in the README):
//! - fp8 tensors: `uint8` bit patterns of the chosen flavour;
//! - scales: `float32`;
//! - activations to quantize: `float32`, or bf16 bit patterns in `uint16`;
//! - outputs: `float32`, `float16`, or bf16 bit patterns in `uint16`.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use half::{bf16, f16};
use npyz::WriterBuilder;

use crate::error::{Error, Result};
use crate::gemm::Output;

/// The element types this crate reads and writes.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    U8(Vec<u8>),
    /// bf16 bit patterns.
    U16(Vec<u16>),
    F16(Vec<f16>),
    F32(Vec<f32>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Data,
}

impl Array {
    /// The array as a 2-D (rows, cols) shape; a 1-D array is one row.
    pub fn dims2(&self, what: &str) -> Result<(usize, usize)> {
        match self.shape.as_slice() {
            [r, c] => Ok((*r, *c)),
            [c] => Ok((1, *c)),
            s => Err(Error::shape("npy", format!("{what}: expected a 2-D array, got shape {s:?}"))),
        }
    }

    pub fn into_u8(self, what: &str) -> Result<Vec<u8>> {
        match self.data {
            Data::U8(v) => Ok(v),
            other => Err(Error::invalid("npy", format!("{what}: expected uint8 fp8 bit patterns, got {}", type_name(&other)))),
        }
    }

    pub fn into_f32(self, what: &str) -> Result<Vec<f32>> {
        match self.data {
            Data::F32(v) => Ok(v),
            other => Err(Error::invalid("npy", format!("{what}: expected float32, got {}", type_name(&other)))),
        }
    }

    /// float32 as is, or uint16 read as bf16 bit patterns.
    pub fn into_f32_from_f32_or_bf16(self, what: &str) -> Result<Vec<f32>> {
        match self.data {
            Data::F32(v) => Ok(v),
            Data::U16(v) => Ok(v.into_iter().map(|b| bf16::from_bits(b).to_f32()).collect()),
            other => Err(Error::invalid("npy", format!("{what}: expected float32 or uint16 (bf16 bits), got {}", type_name(&other)))),
        }
    }
}

fn type_name(d: &Data) -> &'static str {
    match d {
        Data::U8(_) => "uint8",
        Data::U16(_) => "uint16",
        Data::F16(_) => "float16",
        Data::F32(_) => "float32",
    }
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("npy file {}", path.display()), e)
}

/// Bytes per element of the dtypes [`read`] accepts (the header's `descr`, unquoted).
fn item_size(descr: &str) -> Option<u64> {
    match descr {
        "|u1" | "<u1" => Some(1),
        "<u2" | "<f2" => Some(2),
        "<f4" => Some(4),
        _ => None,
    }
}

/// The value of `'key': ` in a header dict, up to the next comma outside parentheses.
fn header_field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') { rest.find(')')? + 1 } else { rest.find([',', '}'])? };
    Some(rest[..end].trim())
}

/// Checks what the header declares against the file before anything is allocated: a shape
/// whose element count overflows 64 bits, and a file shorter than the shape and dtype
/// need. Headers this cannot parse are left to npyz, which says what is wrong.
fn check_declared_size(path: &Path, file: &mut File) -> Result<()> {
    use std::io::Read;
    let bad = |what: String| Error::invalid("npy", format!("{}: {what}", path.display()));
    let file_len = file.metadata().map_err(|e| io_err(path, e))?.len();
    let mut preamble = [0u8; 12];
    let got = file.read(&mut preamble).map_err(|e| io_err(path, e))?;
    if got < 10 || &preamble[..6] != b"\x93NUMPY" {
        return Err(bad(format!("not a .npy file ({file_len} bytes, no \\x93NUMPY header)")));
    }
    let (len_bytes, header_len) = match preamble[6] {
        1 => (2, u16::from_le_bytes([preamble[8], preamble[9]]) as u64),
        2 | 3 if got == 12 => (4, u32::from_le_bytes([preamble[8], preamble[9], preamble[10], preamble[11]]) as u64),
        _ => return Ok(()),
    };
    let data_offset = 8 + len_bytes + header_len;
    if data_offset > file_len {
        return Err(bad(format!("the header declares {header_len} header bytes but the file holds only {file_len} bytes in all (truncated?)")));
    }
    let mut header = vec![0u8; header_len as usize];
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(8 + len_bytes)).map_err(|e| io_err(path, e))?;
    file.read_exact(&mut header).map_err(|e| io_err(path, e))?;
    file.seek(SeekFrom::Start(0)).map_err(|e| io_err(path, e))?;
    let header = String::from_utf8_lossy(&header);
    let Some(shape_text) = header_field(&header, "shape") else { return Ok(()) };
    let dims: std::result::Result<Vec<u64>, _> =
        shape_text.trim_matches(['(', ')']).split(',').map(str::trim).filter(|d| !d.is_empty()).map(str::parse::<u64>).collect();
    let Ok(dims) = dims else { return Ok(()) };
    let Some(count) = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)) else {
        return Err(bad(format!("the header declares shape {dims:?}, whose element count overflows 64 bits")));
    };
    let descr = header_field(&header, "descr").map(|d| d.trim_matches(['\'', '"']).to_string());
    let Some(size) = descr.as_deref().and_then(item_size) else { return Ok(()) };
    let data_len = file_len - data_offset;
    // Trailing bytes are tolerated, as NumPy does.
    match count.checked_mul(size) {
        Some(want) if want <= data_len => Ok(()),
        Some(want) => Err(bad(format!(
            "the header declares shape {dims:?} of {} ({want} bytes of data) but the file holds only {data_len} bytes after the header (truncated?)",
            descr.unwrap_or_default()
        ))),
        None => Err(bad(format!("the header declares shape {dims:?}, whose size in bytes overflows 64 bits"))),
    }
}

pub fn read(path: &Path) -> Result<Array> {
    let mut file = File::open(path).map_err(|e| io_err(path, e))?;
    check_declared_size(path, &mut file)?;
    let npy = npyz::NpyFile::new(BufReader::new(file)).map_err(|e| io_err(path, e))?;
    if npy.order() != npyz::Order::C {
        return Err(Error::invalid("npy", format!("{}: Fortran-ordered arrays are not supported; save with np.ascontiguousarray", path.display())));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    // descr() is the header's Python literal, e.g. '<f4' with its quotes.
    let descr = npy.dtype().descr();
    let data = match descr.trim_matches('\'') {
        "|u1" | "<u1" => Data::U8(npy.into_vec().map_err(|e| io_err(path, e))?),
        "<u2" => Data::U16(npy.into_vec().map_err(|e| io_err(path, e))?),
        "<f2" => Data::F16(npy.into_vec().map_err(|e| io_err(path, e))?),
        "<f4" => Data::F32(npy.into_vec().map_err(|e| io_err(path, e))?),
        other => {
            return Err(Error::invalid("npy", format!("{}: dtype {other} not supported (uint8, uint16, float16, float32)", path.display())));
        }
    };
    Ok(Array { shape, data })
}

fn write_typed<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[usize], data: &[T]) -> Result<()> {
    let want: usize = shape.iter().product();
    if want != data.len() {
        return Err(Error::shape("npy", format!("{}: shape {shape:?} needs {want} values, have {}", path.display(), data.len())));
    }
    let file = File::create(path).map_err(|e| io_err(path, e))?;
    let shape64: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(&shape64).writer(BufWriter::new(file)).begin_nd().map_err(|e| io_err(path, e))?;
    w.extend(data.iter().copied()).map_err(|e| io_err(path, e))?;
    w.finish().map_err(|e| io_err(path, e))
}

pub fn write_u8(path: &Path, shape: &[usize], data: &[u8]) -> Result<()> {
    write_typed(path, shape, data)
}

pub fn write_f32(path: &Path, shape: &[usize], data: &[f32]) -> Result<()> {
    write_typed(path, shape, data)
}

/// Writes a GEMM output: float32, float16, or bf16 as uint16 bit patterns.
pub fn write_output(path: &Path, shape: &[usize], out: &Output) -> Result<()> {
    match out {
        Output::F32(v) => write_typed(path, shape, v),
        Output::F16(v) => write_typed(path, shape, v),
        Output::Bf16(v) => {
            let bits: Vec<u16> = v.iter().map(|x| x.to_bits()).collect();
            write_typed(path, shape, &bits)
        }
    }
}
