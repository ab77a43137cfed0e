#!/usr/bin/env bash
# Session 42, device call 1 (prepared in session 41 as its call 12): call 11's build with the consumers' read of the products moved
# before their wgmmas (s41_sfull_first.patch on a3b4256): GPU tests, then ncu cycles at the
# fixed clock, e0e50fd's build (A) against it (B).
set -u
: "${OUT:?}"; mkdir -p "$OUT"
V=.devx/s41s3
for b in cuda-default device_api; do xz -dkf $V/$b.xz && chmod +x $V/$b; done
T=$V/cuda-default TEST_TIMEOUT=110 bash ci/h200/tests.sh
T=$V/device_api TEST_TIMEOUT=40 bash ci/h200/tests.sh
OUT=/tmp/ncu CLI_A=.devx/s41ship/blockfp8.xz CLI_B=$V/blockfp8.xz ROUNDS=2 bash ci/h200/ncu_ab.sh \
  4096,2112,7168 1024,18432,7168 > /dev/null 2>&1
cp /tmp/ncu/ncu_ab.md $OUT/ && grep "gpc__" $OUT/ncu_ab.md
