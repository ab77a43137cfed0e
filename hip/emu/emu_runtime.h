// CPU emulation of the AMDGPU execution model the hip/ kernels rely on (host C++17).
//
// A launch runs the grid's workgroups one after another on the calling OS thread. Inside a
// workgroup every work-item is a fiber (ucontext) with its own stack; fibers run until they
// reach a synchronisation point and the scheduler then resolves it:
//   * barrier(): released when every live work-item of the workgroup has arrived
//     (work-items that returned no longer count, as with s_barrier);
//   * wave operations (shfl_xor, the two MFMA instructions): released when every lane of the
//     64-lane wave has arrived at the same operation; the scheduler then computes the
//     result for all lanes at once from their operands, exactly as a lockstep wave would.
//     MFMA needs all 64 lanes (the hardware ignores EXEC for it): fewer is an error.
// LDS is one arena per workgroup (64 KiB for gfx942, 160 KiB for gfx950); global accesses
// are range-checked against the buffers registered with emu_register_buffer.
// Errors (deadlock, divergent wave ops, out-of-range access, LDS overflow) end the launch
// with a nonzero return code and a message from emu_last_error(); nothing aborts.
//
// The fp8 conversions follow the launch's flavour: e4m3fnuz (gfx942) or OCP e4m3fn
// (gfx950), round to nearest even; a finite value beyond the format's largest finite value
// converts to NaN (the hardware instruction without its clamp bit is not documented to
// saturate), so a kernel that forgets to clamp produces NaN in tests.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace emu {

enum Flavour : int { FLAVOUR_FNUZ = 0, FLAVOUR_OCP = 1 };

struct f32x16 {
  float v[16];
  float& operator[](int i) { return v[i]; }
  const float& operator[](int i) const { return v[i]; }
};
struct f32x4 {
  float v[4];
  float& operator[](int i) { return v[i]; }
  const float& operator[](int i) const { return v[i]; }
};

uint32_t thread_id_x();
uint32_t block_id_x();
uint32_t block_id_y();
uint32_t grid_dim_x();
uint32_t block_dim_x();

void barrier();
float shfl_xor_f32(float v, int mask);
f32x16 mfma_f32_32x32x16_fp8_fp8(uint64_t a, uint64_t b, const f32x16& c);
f32x4 mfma_f32_16x16x32_fp8_fp8(uint64_t a, uint64_t b, const f32x4& c);

int cvt_pk_fp8_f32(float a, float b, int old, bool word_sel);
float cvt_f32_fp8(int src, int byte_sel);
uint16_t f32_to_f16_bits(float x);

struct u32x4 {
  uint32_t x, y, z, w;
};
// A raw buffer resource (stride 0): base and size in bytes.
struct BufferRsrc {
  const uint8_t* base;
  uint32_t num_records;
};
// Raw buffer loads as gfx9 executes them: each dword whose offset + 4 exceeds num_records
// reads zero; in-range bytes outside every registered buffer (the tail of a partial last
// dword) read poison, as whatever memory holds there would.
u32x4 buffer_load_b128(const BufferRsrc& r, uint32_t voffset);
uint32_t buffer_load_b32(const BufferRsrc& r, uint32_t voffset);

void* lds_alloc_bytes(size_t bytes);
template <class T> T* lds_alloc(size_t count) { return static_cast<T*>(lds_alloc_bytes(sizeof(T) * count)); }

// Ends the current work-item's launch with an error if [p, p+bytes) is outside every
// registered buffer (no check when none is registered).
void check_global(const void* p, size_t bytes, bool write);
template <class T> T global_load(const T* p) {
  check_global(p, sizeof(T), false);
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}
template <class T> void global_store(T* p, T v) {
  check_global(p, sizeof(T), true);
  memcpy(p, &v, sizeof(T));
}

int run_grid(const char* kernel, unsigned gx, unsigned gy, unsigned gz, unsigned threads, Flavour flavour,
             void (*body)(void*), void* ctx);

template <class F>
int launch(const char* kernel, unsigned gx, unsigned gy, unsigned gz, unsigned threads, Flavour flavour, F&& f) {
  return run_grid(kernel, gx, gy, gz, threads, flavour, [](void* c) { (*static_cast<F*>(c))(); }, &f);
}

}  // namespace emu
