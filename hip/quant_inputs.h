// Input element types of the quantization kernels: f32, bf16 and f16 bit patterns, read as f32.
// Conversions by bit manipulation, so the GPU build and the host emulation give the same values.
#pragma once
#include "blockfp8_hip.h"

namespace bfp8 {

enum { IN_F32 = 0, IN_BF16 = 1, IN_F16 = 2 };

BFP8_DEVICE float f32_from_bits(uint32_t bits) {
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

// IEEE binary16 to binary32, exact (subnormals normalized, inf and NaN kept).
BFP8_DEVICE float f32_from_f16_bits(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return f32_from_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return f32_from_bits(sign);
    exp = 1;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    man &= 0x3ffu;
    return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
  }
  return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

// Element i of an input of type IN.
template <int IN>
BFP8_DEVICE float load_input(const void* x, size_t i) {
  if (IN == IN_F32) return gload((const float*)x + i);
  const uint16_t bits = gload((const uint16_t*)x + i);
  if (IN == IN_BF16) return f32_from_bits((uint32_t)bits << 16);
  return f32_from_f16_bits(bits);
}

}  // namespace bfp8
