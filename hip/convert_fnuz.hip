// OCP e4m3fn -> e4m3fnuz checkpoint conversion in place (vLLM's
// normalize_e4m3fn_to_e4m3fnuz): byte 0x80 (-0 in fn, NaN in fnuz) becomes 0x00, every
// other byte is kept (the same bits are worth half in fnuz), and every scale doubles.
// Grid-stride loops, block 256.
#include "blockfp8_hip.h"

namespace bfp8 {

BFP8_DEVICE void convert_e4m3fn_to_fnuz_impl(uint8_t* w, long long n_bytes, float* s, long long n_scales) {
  const long long stride = (long long)grid_dim_x() * 256;
  const long long first = (long long)block_id_x() * 256 + thread_id();
  for (long long i = first; i < n_bytes; i += stride)
    if (gload(w + i) == 0x80) gstore(w + i, (uint8_t)0);
  for (long long i = first; i < n_scales; i += stride) gstore(s + i, gload(s + i) * 2.0f);
}

}  // namespace bfp8

BFP8_KERNEL(convert_e4m3fn_to_fnuz, 256, (uint8_t * w, long long n_bytes, float* s, long long n_scales),
            (::bfp8::convert_e4m3fn_to_fnuz_impl(w, n_bytes, s, n_scales)))
