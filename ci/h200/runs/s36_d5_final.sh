#!/usr/bin/env bash
# Session 36, call 5 (H200, $OUT set): the final tree. .devx/final: the cuda test binary, CLI and
# C ABI library of 697b5f0 + the sustained probe; .devx/base: the CLI of the session's base tree.
# (1) GPU tests. (2) The kernel default at M <= 32 (8 stages where the work items leave each SM
# one CTA) against the base CLI, two interleaved rounds: shapes where the rule now deepens the
# ring (N=2112/576/512 at K=7168, 1024x4096, K=512) and one where it does not (1536x7168).
# (3) ci/h200/sustained_probe.py: blockfp8's package GEMM against DeepGEMM under sustained load.
set -u
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt; date -u >> $R/gpu.txt
t0=$(date +%s)
( bash .peers/build_deepgemm.sh > $R/dg_build.log 2>&1; echo "dg build rc=$?" >> $R/dg_build.log ) &
timeout 240 .devx/final/cuda-default --include-ignored --test-threads 4 two_consumer_tiles gemm_anchor_shapes gemm_ragged_shapes every_compiled_config k_split_pairs split_k_relaunches > $R/tests.log 2>&1
echo "tests rc=$? t=$(( $(date +%s) - t0 ))"; grep -E "test result|FAILED|panicked" $R/tests.log | head
S="--shape 2112,7168 --shape 576,7168 --shape 512,7168 --shape 1024,4096 --shape 7168,512 --shape 4096,512 --shape 1536,7168"
for r in 1 2; do
  for v in base final; do
    timeout 100 .devx/$v/blockfp8 bench --backend cuda --no-progress --no-check --json $S --batch-size 1,8,16,24,32 > $R/d_${v}_$r.json 2>$R/d_${v}_$r.err
    echo "d $r $v rc=$? t=$(( $(date +%s) - t0 ))"
  done
done
python3 ci/h200/ab_compare.py $R/d_base_1.json,$R/d_base_2.json $R/d_final_1.json,$R/d_final_2.json > $R/ab_default.md
grep "kernel_default" $R/ab_default.md
timeout 100 .devx/final/blockfp8 bench --backend cuda --no-progress --mnk 24,2112,7168 --mnk 8,576,7168 --rounds 1 --repeats 3 > $R/check.txt 2>&1; echo "check rc=$?"; grep -E "^\| (24|8) " $R/check.txt
wait
tail -1 $R/dg_build.log
mkdir -p /tmp/bsite/blockfp8/_lib && cp python/blockfp8/*.py /tmp/bsite/blockfp8/ && cp .devx/final/libblockfp8_capi.so /tmp/bsite/blockfp8/_lib/
PYTHONPATH=/tmp/bsite:/tmp/dgb/dg BLOCKFP8_LIB=/tmp/bsite/blockfp8/_lib/libblockfp8_capi.so timeout 200 python3 ci/h200/sustained_probe.py --out $R/probe > $R/sustained.md 2> $R/sustained.err
echo "probe rc=$? t=$(( $(date +%s) - t0 ))"; cat $R/sustained.md; tail -3 $R/sustained.err
cd $OUT && tar czf r.tgz r && rm -rf r
