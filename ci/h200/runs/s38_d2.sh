#!/usr/bin/env bash
# Session 38, device call 2. Builds (.devx/s38, carried): base = 75c5495; asw = base + s38_asw.patch
# (two-consumer tiles: warp 1 issues the activation-scale TMA beside its weight-scale copies, so
# that warp 0 issues only the A and B tiles).
# 1. every test of the asw build's cuda test binary;
# 2. paired A/B base vs asw (each against DeepGEMM) on the 8 M >= 1024 race shapes, 3 passes;
# 3. 4096x2112x7168 on the base build with the shipped 128x192 s4 tile at GROUP_SIZE_M 4, 16 and 32
#    (force_tile.py folders) against the shipped g8, each a paired A/B, 2 passes.
R=$OUT; W=$R/w; mkdir -p $W/ab1 $W/g4 $W/g16 $W/g32
S=.devx/s38
date -u > $W/times.txt
T=$S/asw/cuda-asw OUT=$W bash ci/h200/tests.sh > $W/tests.txt 2>&1; echo "tests rc=$? $(date -u)" >> $W/times.txt
big="1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
export PEERS=$S/peers_built
OUT=$W/ab1 LIB_A=$S/base/libblockfp8_capi.so LIB_B=$S/asw/libblockfp8_capi.so PASSES=3 timeout 260 bash ci/h200/paired_ab.sh $big > $W/ab1.txt 2>&1
echo "ab1 rc=$? $(date -u)" >> $W/times.txt
for g in 4 16 32; do
  OUT=$W/g$g LIB_A=$S/base/libblockfp8_capi.so LIB_B=$S/base/libblockfp8_capi.so CFG_B=$S/cfg_g$g PASSES=2 timeout 70 bash ci/h200/paired_ab.sh 4096,2112,7168 > $W/g$g.txt 2>&1
  echo "g$g rc=$? $(date -u)" >> $W/times.txt
done
tar czf $R/w.tgz -C $R w
