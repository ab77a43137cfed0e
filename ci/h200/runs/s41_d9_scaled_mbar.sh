#!/usr/bin/env bash
# Session 41, device call 9: the 144/192-wide tiles' scale products made by the producer
# warpgroup's warp 3 (s41_scaled_mbar.patch on e0e50fd: a `scaled` mbarrier per stage instead of call 8's named barriers, which cost 3.5%; not with fp32 output): GPU tests, then ncu cycles at the fixed
# clock, e0e50fd's build (A) against it (B); 4096x4096x7168 (128x256) as the control.
set -u
: "${OUT:?}"; mkdir -p "$OUT"; R=/tmp/r; rm -rf $R; mkdir -p $R
V=.devx/s41sc2
for b in cuda-default device_api; do xz -dkf $V/$b.xz && chmod +x $V/$b; done
OUT=$R T=$V/cuda-default TEST_TIMEOUT=240 bash ci/h200/tests.sh
OUT=$R T=$V/device_api TEST_TIMEOUT=120 bash ci/h200/tests.sh
OUT=$R/ncu CLI_A=.devx/s41ship/blockfp8.xz CLI_B=$V/blockfp8.xz ROUNDS=2 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 1024,18432,7168 128,18432,7168 4096,4096,7168 | grep "^|"
tar czf $OUT/r.tgz -C /tmp r
