// Per-block fp8 quantization of weights w [N,K] (f32, bf16 or f16) with 128x128 blocks: one 256-thread
// workgroup per block, grid (ceil(K/128), ceil(N/128)). s = max(amax, 1e-10) / fp8 max of the
// target's flavour (240 e4m3fnuz on gfx942, 448 e4m3fn on gfx950), q = sat(w / s);
// s goes to s[nb * ceil(K/128) + kb].
#include "blockfp8_hip.h"

#include "quant_inputs.h"

namespace bfp8 {

template <int IN>
BFP8_DEVICE void quant_weight_blocks_impl(const void* w, uint8_t* q, float* s, int N, int K) {
  BFP8_LDS_DECL(float, wave_amax, 4);
  const int tid = (int)thread_id();
  const int kb = (int)block_id_x(), nb = (int)block_id_y();
  // Thread t: columns 4*(t%32) .. +3, rows t/32 + 8*i: a wave reads 2 full 512-byte rows.
  const int col = kb * 128 + (tid % 32) * 4;
  const int row0 = nb * 128 + tid / 32;
  float v[16][4];
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int n = row0 + 8 * i;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      v[i][e] = (n < N && col + e < K) ? load_input<IN>(w, (size_t)n * K + col + e) : 0.0f;
      amax = fmax_(amax, fabs_(v[i][e]));
    }
  }
  amax = wave_max(amax);
  if (tid % 64 == 0) wave_amax[tid / 64] = amax;
  sync_threads();
  amax = fmax_(fmax_(wave_amax[0], wave_amax[1]), fmax_(wave_amax[2], wave_amax[3]));
  const float scale = fmax_(amax, 1e-10f) / BFP8_FP8_MAX;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int n = row0 + 8 * i;
    if (n >= N) continue;
    const uint32_t lo = pack2_fp8(v[i][0] / scale, v[i][1] / scale);
    const uint32_t hi = pack2_fp8(v[i][2] / scale, v[i][3] / scale);
    const uint32_t bytes = lo | (hi << 16);
    uint8_t* qrow = q + (size_t)n * K;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (col + e < K) gstore(qrow + col + e, (uint8_t)(bytes >> (8 * e)));
  }
  if (tid == 0) gstore(s + (size_t)nb * ((K + 127) / 128) + kb, scale);
}

}  // namespace bfp8

BFP8_KERNEL(quant_weight_blocks, 256, (const float* w, uint8_t* q, float* s, int N, int K),
            (::bfp8::quant_weight_blocks_impl<::bfp8::IN_F32>(w, q, s, N, K)))
BFP8_KERNEL(quant_weight_blocks_bf16, 256, (const uint16_t* w, uint8_t* q, float* s, int N, int K),
            (::bfp8::quant_weight_blocks_impl<::bfp8::IN_BF16>(w, q, s, N, K)))
BFP8_KERNEL(quant_weight_blocks_f16, 256, (const uint16_t* w, uint8_t* q, float* s, int N, int K),
            (::bfp8::quant_weight_blocks_impl<::bfp8::IN_F16>(w, q, s, N, K)))
