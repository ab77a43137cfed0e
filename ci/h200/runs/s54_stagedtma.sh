#!/usr/bin/env bash
# On the H200 or an H100 ($OUT set): the staged C of 128x256 s4 (and 128x128 s6) stored by TMA
# from its ring stage (.devx/s54tma, `bash ci/h200/stage_variant.sh s54tma ci/h200/runs/s54_stagedtma.patch`)
# against the shipped kernels (.devx/s51): the variant's GPU tests, then cycles at ncu's fixed
# clock (ncu_ab.sh, A = shipped, B = variant) through the working tree's configs, then, with the
# time left, each side paired against DeepGEMM (paired_ab.sh; carry .peers).
set -u
: "${OUT:?}"
export BLOCKFP8_CONFIG_DIR=$PWD/configs
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader | tee "$OUT/gpu.txt"
for t in cuda device_api; do
    xz -dc .devx/s54tma/$t.xz > .devx/s54tma/$t && chmod +x .devx/s54tma/$t
    OUT=$OUT/tests T=.devx/s54tma/$t TEST_TIMEOUT=180 bash ci/h200/tests.sh
done
CLI_A=.devx/s51/blockfp8 CLI_B=.devx/s54tma/blockfp8 ROUNDS=2 OUT=$OUT/ncu bash ci/h200/ncu_ab.sh \
    4096,4096,7168 2048,4096,7168 1024,4096,7168 4096,7168,16384 4096,18432,7168 4096,2112,7168 2>&1 | grep "cycles_elapsed\|inst_executed\| A: \| B: "
left=$((${CALL_BUDGET:-400} - SECONDS))
if [ $left -gt 150 ]; then
    for s in a b; do xz -dc .devx/$([ $s = a ] && echo s51 || echo s54tma)/libblockfp8_capi.so.xz > /tmp/lib_$s.so; done
    OUT=$OUT/paired LIB_A=/tmp/lib_a.so LIB_B=/tmp/lib_b.so PASSES=2 timeout $((left - 10)) bash ci/h200/paired_ab.sh 4096,4096,7168 2048,4096,7168 2>&1 | tail -8
else
    echo "no time left for the paired A/B ($left s)"
fi
