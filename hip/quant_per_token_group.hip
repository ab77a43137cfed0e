// Per-token-group fp8 quantization of activations x [M,K] (f32, bf16 or f16): one 64-lane wave per
// 128-wide group (2 elements per lane), 4 groups per 256-thread workgroup,
// grid.x = ceil(M * ceil(K/128) / 4). s = max(amax, 1e-10) / fp8_max (optionally rounded up
// to a power of two, UE8M0), q = sat(x / s) in the target's fp8 flavour. Scale of row m,
// group g goes to s[m * s_stride_m + g * s_stride_g] (row- or column-major layouts).
#include "blockfp8_hip.h"

#include "quant_inputs.h"

namespace bfp8 {

template <int IN>
BFP8_DEVICE void quant_per_token_group_impl(const void* x, uint8_t* q, float* s, int M, int K, float fp8_max,
                                            int s_stride_m, int s_stride_g, int ue8m0) {
  const int groups = (K + 127) / 128;
  const int tid = (int)thread_id();
  const int lane = tid % 64;
  const long long gi = (long long)block_id_x() * 4 + tid / 64;
  if (gi >= (long long)M * groups) return;  // whole waves leave together
  const int m = (int)(gi / groups), g = (int)(gi % groups);
  const int k = g * 128 + lane * 2;
  const size_t row = (size_t)m * K;
  const float v0 = k < K ? load_input<IN>(x, row + k) : 0.0f;
  const float v1 = k + 1 < K ? load_input<IN>(x, row + k + 1) : 0.0f;
  const float amax = wave_max(fmax_(fabs_(v0), fabs_(v1)));
  float scale = fmax_(amax, 1e-10f) / fp8_max;
  if (ue8m0) scale = ceil_pow2(scale);
  const uint32_t packed = pack2_fp8(v0 / scale, v1 / scale);
  uint8_t* qrow = q + (size_t)m * K;
  if (k < K) gstore(qrow + k, (uint8_t)(packed & 0xff));
  if (k + 1 < K) gstore(qrow + k + 1, (uint8_t)(packed >> 8));
  if (lane == 0) gstore(s + (size_t)m * s_stride_m + (size_t)g * s_stride_g, scale);
}

}  // namespace bfp8

BFP8_KERNEL(quant_per_token_group, 256,
            (const float* x, uint8_t* q, float* s, int M, int K, float fp8_max, int s_stride_m, int s_stride_g,
             int ue8m0),
            (::bfp8::quant_per_token_group_impl<::bfp8::IN_F32>(x, q, s, M, K, fp8_max, s_stride_m, s_stride_g, ue8m0)))
BFP8_KERNEL(quant_per_token_group_bf16, 256,
            (const uint16_t* x, uint8_t* q, float* s, int M, int K, float fp8_max, int s_stride_m, int s_stride_g,
             int ue8m0),
            (::bfp8::quant_per_token_group_impl<::bfp8::IN_BF16>(x, q, s, M, K, fp8_max, s_stride_m, s_stride_g, ue8m0)))
BFP8_KERNEL(quant_per_token_group_f16, 256,
            (const uint16_t* x, uint8_t* q, float* s, int M, int K, float fp8_max, int s_stride_m, int s_stride_g,
             int ue8m0),
            (::bfp8::quant_per_token_group_impl<::bfp8::IN_F16>(x, q, s, M, K, fp8_max, s_stride_m, s_stride_g, ue8m0)))
