// fp8 e4m3 semantics for the emulated conversion and MFMA instructions, written from the
// format definitions (OCP FP8 spec; AMD's fnuz variant), independently of the crate's Rust code:
//   e4m3fnuz (gfx942): bias 8, max 240 (0x7F), NaN 0x80 only, no -0.
//   e4m3fn   (gfx950): bias 7, max 448 (0x7E), NaN 0x7F/0xFF, -0 = 0x80.
#pragma once

#include <math.h>
#include <stdint.h>

#include "emu_runtime.h"

namespace emu {

inline double fp8_max_finite(Flavour f) { return f == FLAVOUR_FNUZ ? 240.0 : 448.0; }

inline float fp8_decode(uint8_t b, Flavour f) {
  const bool fnuz = f == FLAVOUR_FNUZ;
  if (fnuz ? b == 0x80 : (b & 0x7f) == 0x7f) return NAN;
  const int bias = fnuz ? 8 : 7;
  const int e = (b >> 3) & 15, m = b & 7;
  // Subnormal: m * 2^(1-bias-3); normal: (8+m) * 2^(e-bias-3).
  const double mag = e == 0 ? ldexp((double)m, 1 - bias - 3) : ldexp((double)(8 + m), e - bias - 3);
  return (float)((b & 0x80) ? -mag : mag);
}

// Round to nearest even; beyond the largest finite value -> NaN (no clamp, see header).
inline uint8_t fp8_encode_noclamp(float x, Flavour f) {
  const bool fnuz = f == FLAVOUR_FNUZ;
  const uint8_t nan = fnuz ? 0x80 : 0x7f;
  if (isnan(x)) return nan;
  const uint8_t sign = signbit(x) ? 0x80 : 0x00;
  const double a = fabs((double)x);
  const int bias = fnuz ? 8 : 7;
  const int min_exp = 1 - bias;  // exponent of the smallest normal
  if (isinf(x)) return fnuz ? nan : (uint8_t)(sign | 0x7f);
  int e = 0;
  if (a != 0.0) {
    (void)frexp(a, &e);
    e -= 1;  // a in [2^e, 2^(e+1))
  }
  if (e < min_exp) e = min_exp;  // subnormal range shares the smallest normal's quantum
  const double quantum = ldexp(1.0, e - 3);
  const double r = nearbyint(a / quantum) * quantum;  // current rounding mode: nearest even
  if (r > fp8_max_finite(f)) return fnuz ? nan : (uint8_t)(sign | 0x7f);
  if (r == 0.0) return fnuz ? 0x00 : sign;
  int re = 0;
  (void)frexp(r, &re);
  re -= 1;
  if (re < min_exp) return (uint8_t)(sign | (uint8_t)(r / ldexp(1.0, min_exp - 3)));
  const int mant = (int)(r / ldexp(1.0, re - 3)) - 8;
  return (uint8_t)(sign | ((re + bias) << 3) | mant);
}

}  // namespace emu
