#!/usr/bin/env bash
# Session 38, device call 1. Builds (.devx/s38, carried): base = 75c5495; tmaw = base + s38_tmaw.patch
# (two-consumer tiles: the TMA warp also copies the scales, warp 1 leaves); tmaw_ahead = tmaw +
# s37_ahead192.patch (128x192 / 128x144 read their scales one block ahead).
# 1. every test of the tmaw build's cuda test binary (all default tiles, swapped two-consumer ones included);
# 2. paired A/B base vs tmaw (each against DeepGEMM) on the 20 race shapes, 3 passes;
# 3. paired A/B base vs tmaw_ahead on the 8 M >= 1024 shapes, 2 passes.
R=$OUT; W=$R/w; mkdir -p $W/ab1 $W/ab2
S=.devx/s38
date -u > $W/times.txt
T=$S/tmaw/cuda-tmaw OUT=$W bash ci/h200/tests.sh > $W/tests.txt 2>&1; echo "tests rc=$? $(date -u)" >> $W/times.txt
big="1024,4096,7168 1024,18432,7168 2048,4096,7168 4096,4096,7168 4096,7168,16384 4096,24576,1536 4096,2112,7168 4096,7168,2048"
all="8,4096,7168 8,7168,18432 8,18432,7168 64,4096,7168 64,7168,18432 64,18432,7168 64,24576,1536 64,32768,512 64,7168,16384 128,4096,7168 128,7168,18432 128,18432,7168 $big"
OUT=$W/ab1 LIB_A=$S/base/libblockfp8_capi.so LIB_B=$S/tmaw/libblockfp8_capi.so PASSES=3 timeout 300 bash ci/h200/paired_ab.sh $all > $W/ab1.txt 2>&1
echo "ab1 rc=$? $(date -u)" >> $W/times.txt
OUT=$W/ab2 LIB_A=$S/base/libblockfp8_capi.so LIB_B=$S/tmaw_ahead/libblockfp8_capi.so PASSES=2 timeout 140 bash ci/h200/paired_ab.sh $big > $W/ab2.txt 2>&1
echo "ab2 rc=$? $(date -u)" >> $W/times.txt
rm -rf $W/ab*/[AB]*/*.npy 2>/dev/null
tar czf $R/w.tgz -C $R w
