// The rocBLAS default path's scale application. rocBLAS has no block scales, so the host
// runs one fp8 product per 128-wide K block for a chunk of `rows` rows starting at m0 into
// partial [KB][rows][N] fp32 (batch_stride floats apart); this kernel folds them:
// c[(m0+i)*N + n] = sum_kb As[m0+i, kb] * Bs[n/128, kb] * partial[kb*batch_stride + i*N + n].
// grid.x = ceil(rows*N/256), block 256.
#include "blockfp8_hip.h"

namespace bfp8 {

template <class Out>
BFP8_DEVICE void scale_reduce_impl(const float* partial, long long batch_stride, const float* a_scales,
                                   const float* b_scales, void* c, int m0, int rows, int N, int KB, int as_stride_m,
                                   int as_stride_kb) {
  const long long idx = (long long)block_id_x() * 256 + thread_id();
  if (idx >= (long long)rows * N) return;
  const int i = (int)(idx / N), n = (int)(idx % N);
  const int m = m0 + i;
  float acc = 0.0f;
  for (int kb = 0; kb < KB; ++kb) {
    const float as = gload(a_scales + (size_t)m * as_stride_m + (size_t)kb * as_stride_kb);
    const float bs = gload(b_scales + (size_t)(n / 128) * KB + kb);
    acc += as * bs * gload(partial + (size_t)kb * batch_stride + (size_t)i * N + n);
  }
  typedef typename Out::storage T;
  gstore(reinterpret_cast<T*>(c) + (size_t)m * N + n, Out::from_f32(acc));
}

}  // namespace bfp8

#define BFP8_SCALE_REDUCE(out)                                                                                   \
  BFP8_KERNEL(scale_reduce_##out, 256,                                                                           \
              (const float* partial, long long batch_stride, const float* a_scales, const float* b_scales, void* c, \
               int m0, int rows, int N, int KB, int as_stride_m, int as_stride_kb),                              \
              (::bfp8::scale_reduce_impl<::bfp8::out_##out>(partial, batch_stride, a_scales, b_scales, c, m0, rows, \
                                                            N, KB, as_stride_m, as_stride_kb)))
BFP8_SCALE_REDUCE(bf16)
BFP8_SCALE_REDUCE(f16)
BFP8_SCALE_REDUCE(f32)
