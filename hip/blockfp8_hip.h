// blockfp8_hip.h: the few device primitives the kernels in hip/ use, mapped either to
// clang's AMDGPU builtins (device compile: `clang -x hip -nogpuinc -nogpulib
// --cuda-device-only`, no HIP headers) or to the CPU emulation in hip/emu/ (host C++17
// compile with BLOCKFP8_EMU defined). Kernels use nothing else, so the same source runs
// on an MI300X/MI355X and, through the emulation, in `cargo test`.
//
// The fp8 flavour follows the architecture: gfx942 (CDNA3) converts to e4m3fnuz, gfx950
// (CDNA4) to OCP e4m3fn. Host compiles pick it with BLOCKFP8_EMU_GFX942 / _GFX950.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(BLOCKFP8_EMU)
// ---------------------------------------------------------------- host emulation
#include "emu/emu_runtime.h"

// Both architectures' kernels live in one host library: the kernel namespace gets the
// architecture in its name so that the two sets of inline functions never merge.
#if defined(BLOCKFP8_EMU_GFX942)
#define bfp8 bfp8_emu_gfx942
#define BFP8_ARCH_SUFFIX gfx942
#define BFP8_FP8_MAX 240.0f
#define BFP8_EMU_FLAVOUR ::emu::FLAVOUR_FNUZ
#elif defined(BLOCKFP8_EMU_GFX950)
#define bfp8 bfp8_emu_gfx950
#define BFP8_ARCH_SUFFIX gfx950
#define BFP8_FP8_MAX 448.0f
#define BFP8_EMU_FLAVOUR ::emu::FLAVOUR_OCP
#else
#error "host emulation needs BLOCKFP8_EMU_GFX942 or BLOCKFP8_EMU_GFX950"
#endif

#define BFP8_DEVICE inline
#define BFP8_LDS_DECL(type, name, count) type* name = ::emu::lds_alloc<type>(count)

namespace bfp8 {
using f32x16 = ::emu::f32x16;
using f32x4 = ::emu::f32x4;
inline uint32_t thread_id() { return ::emu::thread_id_x(); }
inline uint32_t block_id_x() { return ::emu::block_id_x(); }
inline uint32_t block_id_y() { return ::emu::block_id_y(); }
inline uint32_t grid_dim_x() { return ::emu::grid_dim_x(); }
inline uint32_t block_dim_x() { return ::emu::block_dim_x(); }
inline void sync_threads() { ::emu::barrier(); }
inline float shfl_xor(float v, int mask) { return ::emu::shfl_xor_f32(v, mask); }
inline f32x16 mfma_32x32x16_fp8(uint64_t a, uint64_t b, const f32x16& c) { return ::emu::mfma_f32_32x32x16_fp8_fp8(a, b, c); }
inline f32x4 mfma_16x16x32_fp8(uint64_t a, uint64_t b, const f32x4& c) { return ::emu::mfma_f32_16x16x32_fp8_fp8(a, b, c); }
inline int cvt_pk_fp8_f32(float a, float b, int old, bool hi) { return ::emu::cvt_pk_fp8_f32(a, b, old, hi); }
inline float cvt_f32_fp8(int src, int byte_sel) { return ::emu::cvt_f32_fp8(src, byte_sel); }
inline uint16_t f32_to_f16_bits(float x) { return ::emu::f32_to_f16_bits(x); }
// Global memory goes through the emulation so that out-of-range accesses are caught.
inline void opaque(int&) {}
template <class T> inline T gload(const T* p) { return ::emu::global_load<T>(p); }
template <class T> inline void gstore(T* p, T v) { ::emu::global_store<T>(p, v); }
}  // namespace bfp8

#define BFP8_CAT2(a, b) a##_##b
#define BFP8_CAT(a, b) BFP8_CAT2(a, b)
#define BFP8_WITH_GRID(...) (__VA_ARGS__, unsigned gx, unsigned gy, unsigned gz)
// A kernel entry point becomes `extern "C" int emu_<name>_<arch>(args..., gx, gy, gz)`,
// which runs every workgroup of the grid and returns 0 or an emulation error code
// (message from emu_last_error()).
#define BFP8_KERNEL(name, threads, params, call)                                        \
  extern "C" int BFP8_CAT(emu_##name, BFP8_ARCH_SUFFIX) BFP8_WITH_GRID params {         \
    return ::emu::launch(#name, gx, gy, gz, (threads), BFP8_EMU_FLAVOUR, [&]() { call; });                 \
  }

#else
// ---------------------------------------------------------------- AMDGPU device
#if !defined(__HIP_DEVICE_COMPILE__)
#error "compile with clang -x hip --cuda-device-only (device) or define BLOCKFP8_EMU (host)"
#endif

#define BFP8_DEVICE __attribute__((device)) __attribute__((always_inline)) inline
#define BFP8_LDS_DECL(type, name, count) \
  __attribute__((shared)) __attribute__((aligned(16))) type name##_storage[(count)]; type* name = name##_storage

#if defined(__gfx950__)
#define BFP8_FP8_MAX 448.0f
#elif defined(__gfx942__)
#define BFP8_FP8_MAX 240.0f
#else
#error "blockfp8 HIP kernels target gfx942 (e4m3fnuz) and gfx950 (e4m3fn) only"
#endif

namespace bfp8 {
typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef float f32x4 __attribute__((ext_vector_type(4)));
BFP8_DEVICE uint32_t thread_id() { return __builtin_amdgcn_workitem_id_x(); }
BFP8_DEVICE uint32_t block_id_x() { return __builtin_amdgcn_workgroup_id_x(); }
BFP8_DEVICE uint32_t block_id_y() { return __builtin_amdgcn_workgroup_id_y(); }
// Dispatch packet: workgroup_size_x is the u16 at byte 4, grid_size_x the u32 at byte 12.
BFP8_DEVICE uint32_t block_dim_x() {
  return reinterpret_cast<const uint16_t*>(__builtin_amdgcn_dispatch_ptr())[2];
}
BFP8_DEVICE uint32_t grid_dim_x() {
  return reinterpret_cast<const uint32_t*>(__builtin_amdgcn_dispatch_ptr())[3] / block_dim_x();
}
// HIP's __syncthreads: release fence, s_barrier, acquire fence (LDS and global visibility).
BFP8_DEVICE void sync_threads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
BFP8_DEVICE uint32_t lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
BFP8_DEVICE float shfl_xor(float v, int mask) {
  int src = (int)(lane_id() ^ (uint32_t)mask);
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src << 2, __builtin_bit_cast(int, v)));
}
BFP8_DEVICE f32x16 mfma_32x32x16_fp8(uint64_t a, uint64_t b, const f32x16& c) {
  return __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8((long)a, (long)b, c, 0, 0, 0);
}
BFP8_DEVICE f32x4 mfma_16x16x32_fp8(uint64_t a, uint64_t b, const f32x4& c) {
  return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8((long)a, (long)b, c, 0, 0, 0);
}
BFP8_DEVICE int cvt_pk_fp8_f32(float a, float b, int old, bool hi) {
  // The builtin wants a constant word selector.
  return hi ? __builtin_amdgcn_cvt_pk_fp8_f32(a, b, old, true) : __builtin_amdgcn_cvt_pk_fp8_f32(a, b, old, false);
}
BFP8_DEVICE float cvt_f32_fp8(int src, int byte_sel) {
  // The builtin wants a constant byte selector.
  switch (byte_sel & 3) {
    case 0: return __builtin_amdgcn_cvt_f32_fp8(src, 0);
    case 1: return __builtin_amdgcn_cvt_f32_fp8(src, 1);
    case 2: return __builtin_amdgcn_cvt_f32_fp8(src, 2);
    default: return __builtin_amdgcn_cvt_f32_fp8(src, 3);
  }
}
BFP8_DEVICE uint16_t f32_to_f16_bits(float x) { return __builtin_bit_cast(uint16_t, (_Float16)x); }
// Hides a value from the optimizer so that address math using it stays in the loop.
BFP8_DEVICE void opaque(int& v) { asm volatile("" : "+v"(v)); }
template <class T> BFP8_DEVICE T gload(const T* p) { return *p; }
template <class T> BFP8_DEVICE void gstore(T* p, T v) { *p = v; }
}  // namespace bfp8

#define BFP8_KERNEL(name, threads, params, call)                                                   \
  extern "C" __attribute__((global)) __attribute__((amdgpu_flat_work_group_size(threads, threads))) \
  void name params { call; }
#endif

// ---------------------------------------------------------------- shared helpers
namespace bfp8 {

struct alignas(16) u8x16 {
  uint64_t lo, hi;
};

BFP8_DEVICE uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
BFP8_DEVICE float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }
BFP8_DEVICE float fabs_(float x) { return bits_float(float_bits(x) & 0x7fffffffu); }
BFP8_DEVICE float fmax_(float a, float b) { return a > b ? a : b; }
BFP8_DEVICE float fmin_(float a, float b) { return a < b ? a : b; }

// Max over the 64 lanes of a wave (every lane gets it).
BFP8_DEVICE float wave_max(float v) {
  for (int m = 32; m >= 1; m >>= 1) v = fmax_(v, shfl_xor(v, m));
  return v;
}

// The conversion instruction's behaviour beyond the finite max is not documented
// (CDNA3/CDNA4 ISA guides), so every encode clamps first; NaN stays NaN (comparisons fail).
BFP8_DEVICE float clamp_fp8(float x) {
  return x > BFP8_FP8_MAX ? BFP8_FP8_MAX : (x < -BFP8_FP8_MAX ? -BFP8_FP8_MAX : x);
}
// Two floats -> two fp8 bytes (low byte = a), round to nearest even, saturating.
BFP8_DEVICE uint32_t pack2_fp8(float a, float b) {
  return (uint32_t)cvt_pk_fp8_f32(clamp_fp8(a), clamp_fp8(b), 0, false) & 0xffffu;
}

// Round-to-nearest-even fp32 -> bf16 bits (NaN stays quiet NaN).
BFP8_DEVICE uint16_t f32_to_bf16_bits(float x) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

// Output element types of the GEMM and scale_reduce kernels.
struct out_bf16 {
  typedef uint16_t storage;
  static BFP8_DEVICE uint16_t from_f32(float x) { return f32_to_bf16_bits(x); }
};
struct out_f16 {
  typedef uint16_t storage;
  static BFP8_DEVICE uint16_t from_f32(float x) { return f32_to_f16_bits(x); }
};
struct out_f32 {
  typedef float storage;
  static BFP8_DEVICE float from_f32(float x) { return x; }
};

// UE8M0: the smallest power of two >= s (s > 0 finite normal), by bit manipulation so
// that it is exact (no log2/exp2 approximations on the device).
BFP8_DEVICE float ceil_pow2(float s) {
  uint32_t u = float_bits(s);
  if ((u & 0x007fffffu) != 0) u = (u & 0xff800000u) + 0x00800000u;
  return bits_float(u & 0xff800000u);
}

}  // namespace bfp8
