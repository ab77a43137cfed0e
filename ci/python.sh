#!/usr/bin/env bash
# C ABI and Python package on the CPU backend (no GPU): the capi crate's tests (including the C
# program tests/c/test_capi.c compiled with cc), then the package installed with the README's
# command and its pytest suite. Torch tests run where torch is installed and say why they skip
# otherwise (torch's CPU wheel index is not reachable from CI; `pip install torch` brings the
# 3 GB CUDA build, too slow for this job). BLOCKFP8_CARGO_PROFILE=dev reuses the test build.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
py=${PYTHON:-python3}
cargo test --locked -p blockfp8-capi
"$py" -m pip install -q --disable-pip-version-check numpy pytest
BLOCKFP8_CARGO_PROFILE=${BLOCKFP8_CARGO_PROFILE:-dev} "$py" -m pip install -q --disable-pip-version-check ./python
# The crate's CLI for the bit-for-bit tests (built by the earlier cargo test runs; the tests skip
# with a reason where it is absent).
"$py" -m pytest python/tests -q -rs -p no:cacheprovider
