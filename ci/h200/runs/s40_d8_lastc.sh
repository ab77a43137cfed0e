#!/usr/bin/env bash
# Session 40, device call 8: the store warp stores a CTA's last C itself (16-byte row chunks
# read back from the C buffer) instead of by TMA, whose stores took 3.3 k cycles from the last K
# block to having read the buffer (call 7). The staged default build (.device-bin): its GPU tests
# (cuda and device-API), then ncu cycles against the shipped CLI at the four shipped shapes of
# the store-warp tiles (ncu_ab.sh, 2 rounds).
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=$OUT/r; mkdir -p $R
xz -dkf .device-bin/cuda-default.xz .device-bin/device_api.xz
BLOCKFP8_REQUIRE_BACKENDS=cuda timeout 200 .device-bin/device_api --test-threads 2 > $R/device_api.log 2>&1; echo "device_api rc=$?"
grep -E "test result|panicked|FAILED" $R/device_api.log | head -4
OUT=$R TEST_TIMEOUT=250 T=.device-bin/cuda-default bash ci/h200/tests.sh; echo "cuda tests rc=$?"
OUT=$R/ncu CLI_A=.devx/s40/blockfp8.xz CLI_B=.device-bin/blockfp8 ROUNDS=2 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 1024,18432,7168 4096,24576,1536 4096,7168,2048 2>&1 | tail -12
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
