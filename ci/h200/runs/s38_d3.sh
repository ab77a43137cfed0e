#!/usr/bin/env bash
# Session 38, device call 3. Builds (.devx/s38, carried): base = 75c5495; sf = base + s38_sf.patch
# (the 144/192-wide tiles read a block's scales after its `full` wait and before its wgmmas, as
# DeepGEMM, instead of after them).
# 1. every test of the sf build's cuda test binary;
# 2. paired A/B base vs sf (each against DeepGEMM) on the 8 M >= 1024 race shapes and 128x18432x7168, 3 passes;
# 3. 4096x2112x7168 on the base build at GROUP_SIZE_M 4 against the shipped 8 (call 2: +0.6% in 2 passes), 4 passes.
R=$OUT; W=$R/w; mkdir -p $W/ab1 $W/g4
S=.devx/s38
date -u > $W/times.txt
T=$S/sf/cuda-sf OUT=$W bash ci/h200/tests.sh > $W/tests.txt 2>&1; echo "tests rc=$? $(date -u)" >> $W/times.txt
big="128,18432,7168 1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
export PEERS=$S/peers_built
OUT=$W/ab1 LIB_A=$S/base/libblockfp8_capi.so LIB_B=$S/sf/libblockfp8_capi.so PASSES=3 timeout 270 bash ci/h200/paired_ab.sh $big > $W/ab1.txt 2>&1
echo "ab1 rc=$? $(date -u)" >> $W/times.txt
OUT=$W/g4 LIB_A=$S/base/libblockfp8_capi.so LIB_B=$S/base/libblockfp8_capi.so CFG_B=$S/cfg_g4 PASSES=4 timeout 110 bash ci/h200/paired_ab.sh 4096,2112,7168 > $W/g4.txt 2>&1
echo "g4 rc=$? $(date -u)" >> $W/times.txt
tar czf $R/w.tgz -C $R w
