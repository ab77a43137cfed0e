#!/usr/bin/env bash
# Session 36, call 4 (H200, $OUT set).
# (1) The kernel default at M <= 32: the base CLI (this tree) against two variants where the
#     swapped 16x64 / 32x64 tiles take a deeper ring when their tiles fit on the SMs at once, as
#     the M = 33-128 default does (s36_default_s8.patch: 8 stages; s36_default_s10.patch: 32x64 in
#     10). Two interleaved rounds; ab_compare's kernel-default rows are the comparison.
# (2) A clock and power probe (s36_clock_probe.py): each kernel alone for 3 s at three large-M race
#     shapes, blockfp8's package GEMM (.devx/capi) against DeepGEMM built from .peers.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log ) &
S="--shape 2112,7168 --shape 4096,7168 --shape 7168,2048 --shape 24576,1536 --shape 7168,18432 --shape 4096,4096 --shape 14336,4096 --shape 4096,14336 --shape 8192,8192 --shape 28672,8192"
for r in 1 2; do
  for v in base v8 v10; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json $S --batch-size 8,24,32 > $R/d_${v}_$r.json 2>$R/d_${v}_$r.err
    echo "d $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
for v in v8 v10; do
  python3 ci/h200/ab_compare.py $R/d_base_1.json,$R/d_base_2.json $R/d_${v}_1.json,$R/d_${v}_2.json > $R/ab_$v.md
  echo "== $v (kernel default rows)"; grep "kernel_default" $R/ab_$v.md
done
wait
tail -1 $R/dg_build.log
mkdir -p /tmp/bsite/blockfp8/_lib && cp python/blockfp8/*.py /tmp/bsite/blockfp8/ && cp .devx/capi/libblockfp8_capi.so /tmp/bsite/blockfp8/_lib/
PYTHONPATH=/tmp/bsite:/tmp/dgb/dg:ci/h200 BLOCKFP8_LIB=/tmp/bsite/blockfp8/_lib/libblockfp8_capi.so timeout 150 python3 ci/h200/runs/s36_clock_probe.py $R > $R/clock.md 2> $R/clock.err
echo "clock rc=$? t=$(( $(date +%s) - t0 ))"; cat $R/clock.md; tail -5 $R/clock.err
cd $OUT && tar czf r.tgz r && rm -rf r
