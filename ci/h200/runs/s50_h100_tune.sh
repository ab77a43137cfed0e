#!/usr/bin/env bash
# On one H100 ($OUT set): tunes the DeepSeek-V3 tp-8 weight shapes with the staged build
# .devx/s50race (`bash ci/h200/stage_variant.sh s50race`; its compiled tiles are the
# candidates), in three groups, each its own `blockfp8 tune` process so a finished group's files
# are written even if a later one runs out of time. Carry h100_tp8 back in (untar
# $OUT/h100_tp8.tgz in the repository root) and run again to resume from its journal.
# Files and journals come back in $OUT/h100_tp8.tgz.
# TUNE_GROUPS (groups split by '|') replaces the three groups, e.g. to tune only the last.
# The groups are `blockfp8 config shapes --model deepseek-v3 --tp-size 8` split in three, written
# out because the staged build predates that command.
# TUNE_BUILD names another staged build (default s50race), TUNE_SAVE another output folder
# (default h100_tp8), e.g. to tune shapes of other tensor-parallel sizes into a folder of their own;
# a path under the git-ignored .devx (TUNE_SAVE=.devx/h100_tp4) carries a journal back in to resume
# without a tuning folder in the repository root.
# Usage: [TUNE_BUDGET=500] [TUNE_GROUPS='24576,7168 32768,512'] [TUNE_BUILD=s51 TUNE_SAVE=h100_more] bash ci/h200/runs/s50_h100_tune.sh
set -u
: "${OUT:?}"
B=/tmp/h100bin; mkdir -p $B
build=${TUNE_BUILD:-s50race}; save=${TUNE_SAVE:-h100_tp8}
xz -dc .devx/$build/blockfp8.xz > $B/blockfp8 && chmod +x $B/blockfp8 || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
$B/blockfp8 info > $OUT/info.txt 2>&1
budget=${TUNE_BUDGET:-500}
groups=${TUNE_GROUPS:-"4608,7168 3072,7168 1536,7168 512,7168 576,7168 2112,7168|7168,2304 7168,2048 7168,256 4096,512 3072,1536|24576,7168 7168,16384 7168,18432 32768,512"}
IFS='|' read -r -a group_list <<< "$groups"
for group in "${group_list[@]}"; do
    left=$((budget - SECONDS)); [ $left -gt 30 ] || { echo "no time for: $group" | tee -a $OUT/tune.log; continue; }
    args=(); for s in $group; do args+=(--shape $s); done
    echo "== $group ($left s left)" >> $OUT/tune.log
    timeout $left $B/blockfp8 tune --backend cuda "${args[@]}" --devices 0 --save-path $save --no-progress >> $OUT/tune.log 2>&1
    echo "group rc=$? at $SECONDS s" | tee -a $OUT/tune.log
done
mkdir -p "$(dirname "$OUT/$save.tgz")"
tar czf "$OUT/$save.tgz" "$save"
ls $save | tee $OUT/files.txt
