//! FP8 flavours: OCP e4m3fn (NVIDIA Hopper, AMD gfx950) and AMD e4m3fnuz (gfx942).
//! Encoding rounds to nearest even and saturates to the finite max; decoding is exact.
//! (The `float8` crate covers e4m3fn only, so both flavours are implemented here and
//! e4m3fn is cross-checked against `float8` in the tests.)
//!
//! Also here: the conversion of an OCP (e4m3fn) checkpoint to e4m3fnuz for gfx942
//! ([`convert_e4m3fn_to_fnuz`]), which vLLM calls `normalize_e4m3fn_to_e4m3fnuz`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fp8Format {
    /// OCP e4m3fn: bias 7, max 448, NaN 0x7F/0xFF, -0 = 0x80.
    E4m3fn,
    /// AMD e4m3fnuz: bias 8, max 240, NaN 0x80 only, no -0.
    E4m3fnuz,
}

impl Fp8Format {
    /// "e4m3fn" or "e4m3fnuz" (the spelling `FromStr` accepts).
    pub fn name(self) -> &'static str {
        match self {
            Fp8Format::E4m3fn => "e4m3fn",
            Fp8Format::E4m3fnuz => "e4m3fnuz",
        }
    }

    fn bias(self) -> i32 {
        match self {
            Fp8Format::E4m3fn => 7,
            Fp8Format::E4m3fnuz => 8,
        }
    }

    /// Bit pattern of the largest finite magnitude (0x7E = 448 or 0x7F = 240).
    fn max_code(self) -> u8 {
        match self {
            Fp8Format::E4m3fn => 0x7E,
            Fp8Format::E4m3fnuz => 0x7F,
        }
    }

    /// Largest finite value (448 or 240).
    pub fn max_finite(self) -> f32 {
        match self {
            Fp8Format::E4m3fn => 448.0,
            Fp8Format::E4m3fnuz => 240.0,
        }
    }

    /// Default fp8 max used to compute *activation* scales: 448 for e4m3fn, 224 for e4m3fnuz
    /// (vLLM's choice on fnuz hardware for dynamically quantized models).
    pub fn default_activation_max(self) -> f32 {
        match self {
            Fp8Format::E4m3fn => 448.0,
            Fp8Format::E4m3fnuz => 224.0,
        }
    }

    /// The bit pattern `encode` gives for NaN: 0x7F (e4m3fn) or 0x80 (e4m3fnuz).
    pub fn nan_code(self) -> u8 {
        match self {
            Fp8Format::E4m3fn => 0x7F,
            Fp8Format::E4m3fnuz => 0x80,
        }
    }

    /// Whether `b` is a NaN pattern of this flavour.
    pub fn is_nan(self, b: u8) -> bool {
        match self {
            Fp8Format::E4m3fn => b & 0x7F == 0x7F,
            Fp8Format::E4m3fnuz => b == 0x80,
        }
    }

    /// Round-to-nearest-even, saturating encode. NaN input encodes to the flavour's NaN;
    /// +-inf and every magnitude above the finite max give +-max. Negative values that round
    /// to zero give -0 (0x80) in e4m3fn and +0 in e4m3fnuz (which has no -0).
    pub fn encode(self, x: f32) -> u8 {
        if x.is_nan() {
            return self.nan_code();
        }
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = x.abs();
        let magnitude = if a >= self.max_finite() {
            self.max_code()
        } else {
            let min_normal_exp = 1 - self.bias();
            if a < pow2(min_normal_exp) {
                // Subnormal range: count in units of the subnormal quantum 2^(emin-3).
                // Scaling by a power of two is exact; q in 0..=8 and q = 8 is the smallest
                // normal's code, so no special case is needed.
                round_half_even_small(a * pow2(3 - min_normal_exp)) as u8
            } else {
                // a is a normal f32 here (a >= 2^-7), so its exponent field is exact.
                let e = ((a.to_bits() >> 23) & 0xFF) as i32 - 127;
                let q = round_half_even_small(a * pow2(3 - e)) as i32; // 8..=16
                // q = 16 carries into the next exponent through the addition.
                (((e + self.bias()) << 3) + (q - 8)) as u8
            }
            .min(self.max_code())
        };
        if magnitude == 0 && self == Fp8Format::E4m3fnuz {
            return 0; // fnuz has no -0: 0x80 is its NaN
        }
        sign | magnitude
    }

    /// Exact decode. NaN patterns give NaN.
    pub fn decode(self, b: u8) -> f32 {
        if self.is_nan(b) {
            return f32::NAN;
        }
        let exp = ((b >> 3) & 0x0F) as i32;
        let man = (b & 0x07) as f32;
        let magnitude = if exp == 0 {
            man * pow2(-2 - self.bias()) // man/8 * 2^(1-bias)
        } else {
            (8.0 + man) * pow2(exp - self.bias() - 3)
        };
        if b & 0x80 != 0 {
            -magnitude
        } else {
            magnitude
        }
    }

    /// A 256-entry decode table (for hot loops).
    pub fn decode_table(self) -> [f32; 256] {
        std::array::from_fn(|i| self.decode(i as u8))
    }

    /// Encodes a slice (see [`Fp8Format::encode`]).
    pub fn encode_slice(self, src: &[f32]) -> Vec<u8> {
        src.iter().map(|&x| self.encode(x)).collect()
    }

    /// Decodes a slice (see [`Fp8Format::decode`]).
    pub fn decode_slice(self, src: &[u8]) -> Vec<f32> {
        let table = self.decode_table();
        src.iter().map(|&b| table[b as usize]).collect()
    }
}

impl std::fmt::Display for Fp8Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Fp8Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "e4m3fn" | "fp8_e4m3fn" | "float8_e4m3fn" => Ok(Fp8Format::E4m3fn),
            "e4m3fnuz" | "fp8_e4m3fnuz" | "float8_e4m3fnuz" => Ok(Fp8Format::E4m3fnuz),
            _ => Err(Error::invalid("fp8 format", format!("{s:?} (expected e4m3fn or e4m3fnuz)"))),
        }
    }
}

/// Round half to even for 0 <= v < 2^23: adding 2^23 leaves no fraction bits, so the FPU's
/// default rounding (nearest even) does the work. Unlike `f32::round_ties_even` this needs
/// no SSE4.1 `roundss`, which baseline x86_64 lacks (it would be a libm call per value).
#[inline]
fn round_half_even_small(v: f32) -> f32 {
    const TWO_23: f32 = 8_388_608.0;
    debug_assert!((0.0..TWO_23).contains(&v));
    (v + TWO_23) - TWO_23
}

/// 2^e as f32 for e in the normal range (exact).
#[inline]
fn pow2(e: i32) -> f32 {
    debug_assert!((-126..=127).contains(&e));
    f32::from_bits(((e + 127) as u32) << 23)
}

/// Rewrites e4m3fn bit patterns as e4m3fnuz patterns worth *half* the value: 0x80 (-0 in
/// fn, NaN in fnuz) becomes 0x00, every other byte is kept. Pair it with doubling the
/// scales (see [`convert_e4m3fn_to_fnuz`]) so that q * s is unchanged. fn NaN bytes (0x7F,
/// 0xFF) would become +-240; checkpoints do not contain them.
pub fn convert_e4m3fn_bytes_to_fnuz(bytes: &mut [u8]) {
    for b in bytes.iter_mut() {
        if *b == 0x80 {
            *b = 0x00;
        }
    }
}

/// Converts an OCP e4m3fn checkpoint tensor and its fp32 dequantizing scales (e.g.
/// DeepSeek-V3 `weight_scale_inv`) in place to e4m3fnuz for gfx942: bytes as in
/// [`convert_e4m3fn_bytes_to_fnuz`], every scale x2, so each dequantized value is identical.
///
/// Errors (nothing is modified) if a scale is not finite or would overflow when doubled.
pub fn convert_e4m3fn_to_fnuz(bytes: &mut [u8], scales: &mut [f32]) -> Result<()> {
    if let Some(i) = scales.iter().position(|s| !(s * 2.0).is_finite()) {
        return Err(Error::NonFinite {
            op: "convert_e4m3fn_to_fnuz",
            what: format!("scale #{i} = {} is not finite or overflows when doubled", scales[i]),
        });
    }
    convert_e4m3fn_bytes_to_fnuz(bytes);
    for s in scales.iter_mut() {
        *s *= 2.0;
    }
    Ok(())
}

/// As [`convert_e4m3fn_to_fnuz`] for UE8M0 scales stored as biased exponent bytes (value
/// 2^(e-127), 0xFF = NaN): each exponent byte gets +1. Errors (nothing is modified) on an
/// exponent byte of 0xFE or 0xFF, which has no doubled UE8M0 value.
pub fn convert_e4m3fn_to_fnuz_ue8m0(bytes: &mut [u8], scale_exponents: &mut [u8]) -> Result<()> {
    if let Some(i) = scale_exponents.iter().position(|&e| e >= 0xFE) {
        return Err(Error::NonFinite {
            op: "convert_e4m3fn_to_fnuz_ue8m0",
            what: format!("UE8M0 scale #{i} has exponent byte {:#04x}, which cannot be doubled", scale_exponents[i]),
        });
    }
    convert_e4m3fn_bytes_to_fnuz(bytes);
    for e in scale_exponents.iter_mut() {
        *e += 1;
    }
    Ok(())
}
