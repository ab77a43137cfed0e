#!/usr/bin/env bash
# Session 36, call 6 (H200, $OUT set): ci/h200/sustained_probe.py at all eight M >= 1024 race
# shapes (blockfp8's package GEMM from .devx/final, the final tree's kernels, against DeepGEMM
# built from .peers), 2.5 s per segment, two segments per kernel alternating.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$? t=$(( $(date +%s) - t0 ))"
mkdir -p /tmp/bsite/blockfp8/_lib && cp python/blockfp8/*.py /tmp/bsite/blockfp8/ && cp .devx/final/libblockfp8_capi.so /tmp/bsite/blockfp8/_lib/
M=""; for s in 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048; do M="$M --mnk $s"; done
PYTHONPATH=/tmp/bsite:/tmp/dgb/dg BLOCKFP8_LIB=/tmp/bsite/blockfp8/_lib/libblockfp8_capi.so timeout 330 python3 ci/h200/sustained_probe.py --out $R/probe --seconds 2.5 $M > $R/sustained.md 2> $R/sustained.err
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"; cat $R/sustained.md; tail -3 $R/sustained.err
cd $OUT && tar czf r.tgz r && rm -rf r
