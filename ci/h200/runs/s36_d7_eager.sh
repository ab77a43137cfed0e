#!/usr/bin/env bash
# Session 36, call 7 (H200, $OUT set): s36_d7_eager.py with the tree's package and .devx/py's C ABI library.
set -u
mkdir -p /tmp/bsite/blockfp8/_lib && cp python/blockfp8/*.py /tmp/bsite/blockfp8/ && cp .devx/py/libblockfp8_capi.so /tmp/bsite/blockfp8/_lib/
PYTHONPATH=/tmp/bsite BLOCKFP8_LIB=/tmp/bsite/blockfp8/_lib/libblockfp8_capi.so timeout 100 python3 ci/h200/runs/s36_d7_eager.py 2>&1 | grep -v WARN | tee $OUT/eager.txt
