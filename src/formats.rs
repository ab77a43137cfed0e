//! FP8 flavours: OCP e4m3fn (NVIDIA Hopper, AMD gfx950) and AMD e4m3fnuz (gfx942).
//! Encoding rounds to nearest even and saturates to the finite max; decoding is exact.
//! (The `float8` crate covers e4m3fn only, so both flavours are implemented here and
//! e4m3fn is cross-checked against `float8` in the tests.)

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fp8Format {
    /// OCP e4m3fn: bias 7, max 448, NaN 0x7F/0xFF, -0 = 0x80.
    E4m3fn,
    /// AMD e4m3fnuz: bias 8, max 240, NaN 0x80 only, no -0.
    E4m3fnuz,
}

impl Fp8Format {
    /// Largest finite value (448 or 240).
    pub fn max_finite(self) -> f32 {
        todo!("H1")
    }
    /// Default fp8 max used to compute *activation* scales: 448 for e4m3fn, 224 for e4m3fnuz
    /// (vLLM's choice on fnuz hardware for dynamically quantized models).
    pub fn default_activation_max(self) -> f32 {
        todo!("H1")
    }
    /// Round-to-nearest-even, saturating encode. NaN input encodes to the flavour's NaN.
    pub fn encode(self, x: f32) -> u8 {
        let _ = x;
        todo!("H1")
    }
    /// Exact decode.
    pub fn decode(self, b: u8) -> f32 {
        let _ = b;
        todo!("H1")
    }
    /// A 256-entry decode table (for hot loops).
    pub fn decode_table(self) -> [f32; 256] {
        todo!("H1")
    }
}
